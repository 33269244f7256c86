"""Prompts for the reference captures, built from text so that any tokenizer can encode them.

  long         held-out Brown texts, the genre with most held-out text first, joined to fill the prompt
  multi-topic  --topics held-out texts of different genres, prompt_tokens / topics tokens each
  needle       a held-out (or --haystack train) Brown haystack with a passkey at --depth; the prompt
               ends with the question, so decoding starts with the answer
  text         the tokens of --text FILE
  random       uniformly random token ids (for a model without a tokenizer, e.g. a test model)
Each returns (prompt ids, info dict for the provenance).
"""
import hashlib
import random

from passkey import ANSWER, build_passkey, passkey_digits


def _held(texts: list, haystack: str = 'held-out') -> list:
    return [t for t in texts if t['held_out'] == (haystack == 'held-out')]


def _fill(encode, texts: list, n: int) -> tuple:
    ids, used = [], []
    for t in texts:
        if len(ids) >= n:
            break
        ids += encode(t['text'] + '\n')
        used.append(t['id'])
    if len(ids) < n:
        raise SystemExit(f'not enough text for {n} tokens ({len(ids)})')
    return ids[:n], used


def _head(bos):
    return [] if bos is None else [bos]


def long_document(encode, bos, texts: list, n: int):
    held = _held(texts)
    by_genre = {}
    for t in held:
        by_genre.setdefault(t['genre'], []).append(t)
    order = sorted(by_genre, key=lambda g: -sum(len(t['text']) for t in by_genre[g]))
    ordered = [t for g in order for t in by_genre[g]]
    ids, used = _fill(encode, ordered, n - len(_head(bos)))
    return _head(bos) + ids, {'scenario': 'long', 'texts': used, 'split': 'held-out'}


def multi_topic(encode, bos, texts: list, n: int, topics: int = 4):
    held = _held(texts)
    seen, picks = set(), []
    for t in held:
        if t['genre'] not in seen:
            seen.add(t['genre'])
            picks.append(t)
    picks = picks[:topics]
    ids = _head(bos)
    segments = []
    per = (n - len(ids)) // topics
    for i, t in enumerate(picks):
        want = per if i < topics - 1 else n - len(ids)
        part, _ = _fill(encode, [t] + [u for u in held if u['genre'] == t['genre'] and u is not t], want)
        segments.append({'genre': t['genre'], 'text': t['id'], 'tokens': [len(ids), len(ids) + want]})
        ids += part
    return ids, {'scenario': 'multi-topic', 'segments': segments, 'split': 'held-out'}


def needle(encode, bos, texts: list, n: int, depth: float, seed: int, haystack: str = 'held-out'):
    rng = random.Random(seed)
    digits = passkey_digits(rng)
    hay, used = _fill(encode, _held(texts, haystack), n)
    n_answer = len(encode(ANSWER.format(d=digits)))
    ids, span, answer = build_passkey(encode, hay, digits, depth, n + n_answer, bos=bos)
    expect = ids[answer[0]:answer[1]]
    return ids[:n], {'scenario': 'needle', 'depth': depth, 'passkey': digits, 'needle_tokens': list(span),
                     'answer_ids': expect, 'haystack': haystack, 'texts': used}


def text_file(encode, bos, path: str, n: int):
    with open(path, encoding='utf-8') as f:
        raw = f.read()
    ids = _head(bos) + encode(raw)
    if len(ids) < n:
        raise SystemExit(f'--text {path}: {len(ids)} tokens, fewer than --prompt-tokens {n}')
    return ids[:n], {'scenario': 'text', 'file': path, 'sha256': hashlib.sha256(raw.encode()).hexdigest()}


def random_tokens(vocab: int, n: int, seed: int):
    rng = random.Random(seed)
    return [rng.randrange(vocab) for _ in range(n)], {'scenario': 'random', 'vocab': vocab, 'seed': seed}
