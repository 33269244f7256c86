"""The passkey (needle) sentences, shared by training and the needle capture, as text so that any
tokenizer (the word vocabulary, or a Hugging Face model's own) can encode them."""
import random

NEEDLE = 'the pass key is {d} . remember it . {d} is the pass key .'
QUESTION = 'what is the pass key ? the pass key is'
ANSWER = '{d} .'


def passkey_digits(rng: random.Random, n: int = 5) -> str:
    return ' '.join(str(rng.randrange(10)) for _ in range(n))


def build_passkey(encode, hay: list, digits: str, depth: float, total: int, bos=None):
    """Token ids: [bos] + haystack with the needle at `depth` (0..1 of the haystack) + question +
    answer, exactly `total` tokens long. Returns (ids, needle_span (start, end), answer_span)."""
    needle = encode(NEEDLE.format(d=digits))
    question = encode(QUESTION)
    answer = encode(ANSWER.format(d=digits))
    head = [] if bos is None else [bos]
    n_hay = total - len(head) - len(needle) - len(question) - len(answer)
    if n_hay < 1 or len(hay) < n_hay:
        raise ValueError(f'haystack of {len(hay)} tokens cannot fill {n_hay}')
    at = int(round(depth * n_hay))
    ids = head + hay[:at] + needle + hay[at:n_hay] + question + answer
    n0 = len(head) + at
    a0 = total - len(answer)
    return ids, (n0, n0 + len(needle)), (a0, a0 + len(answer) - 1)  # the answer's digits, not its final '.'
