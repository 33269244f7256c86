"""A word-level tokenizer built from the training texts (no downloads, no external library).

Lower-cased words (with an optional 's / n't style suffix), single digits, and single punctuation
characters; the vocabulary holds the specials, the ten digits, every punctuation character seen,
and then the most frequent words; anything else is <unk>. Digits are always single tokens, so a
5-digit passkey is 5 tokens.
"""
import collections
import json
import re

TOKEN_RE = re.compile(r"[a-z]+(?:'[a-z]+)?|\d|[^\sa-z\d]")
SPECIALS = ['<pad>', '<bos>', '<eod>', '<unk>']
PAD, BOS, EOD, UNK = 0, 1, 2, 3


def split_words(text: str) -> list:
    return TOKEN_RE.findall(text.lower())


class WordTokenizer:
    def __init__(self, vocab: list):
        if vocab[:len(SPECIALS)] != SPECIALS:
            raise ValueError('vocabulary must start with ' + ', '.join(SPECIALS))
        self.vocab = list(vocab)
        self.index = {w: i for i, w in enumerate(self.vocab)}
        self.bos_id = BOS

    @classmethod
    def build(cls, texts: list, size: int) -> 'WordTokenizer':
        counts = collections.Counter()
        for t in texts:
            counts.update(split_words(t))
        fixed = SPECIALS + [str(d) for d in range(10)]
        punct = sorted(w for w in counts if not w[0].isalnum())
        words = [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
                 if w not in fixed and w not in punct]
        head = fixed + [p for p in punct if p not in fixed]
        return cls(head + words[:max(0, size - len(head))])

    def encode(self, text: str) -> list:
        return [self.index.get(w, UNK) for w in split_words(text)]

    def decode(self, ids) -> str:
        return ' '.join(self.vocab[i] if 0 <= i < len(self.vocab) else '<?>' for i in ids)

    def __len__(self) -> int:
        return len(self.vocab)

    def save(self, path: str) -> None:
        with open(path, 'w', encoding='utf-8') as f:
            json.dump({'kind': 'kvtier-word-tokenizer', 'pattern': TOKEN_RE.pattern, 'vocab': self.vocab}, f)

    @classmethod
    def load(cls, path: str) -> 'WordTokenizer':
        with open(path, encoding='utf-8') as f:
            return cls(json.load(f)['vocab'])
