"""Capture the project's reference traces from a kvtier checkpoint, in one process:

    python3 traces/capture/reference.py --model CKPT --corpus brown.jsonl --out DIR

  brown-long-8k.kvt         held-out text, 8192-token prompt, 512 sampled decode steps
  brown-multitopic-8k.kvt   4 held-out texts of 4 genres (2048 tokens each), 256 steps
  brown-needle-8k-dNN.kvt   passkey at depth NN% of a held-out haystack, 64 greedy steps
  (and, with --train-haystack, one needle run in a training-text haystack, depth 50%)
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--model', required=True)
    ap.add_argument('--corpus', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--name', default='kvtier-brown-gpt')
    ap.add_argument('--prompt-tokens', type=int, default=8192)
    ap.add_argument('--topk', type=int, default=64)
    ap.add_argument('--depths', default='0.1,0.3,0.5,0.7,0.9')
    ap.add_argument('--train-haystack', action='store_true')
    ap.add_argument('--note', action='append', default=[])
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    n = a.prompt_tokens
    base = ['--model', a.model, '--corpus', a.corpus, '--name', a.name, '--topk', str(a.topk), '--force',
            '--prompt-tokens', str(n)] + [x for note in a.note for x in ('--note', note)]
    k = f'{n // 1024}k'
    runs = [['--scenario', 'long', '--steps', '512', '--out', os.path.join(a.out, f'brown-long-{k}.kvt')],
            ['--scenario', 'multi-topic', '--steps', '256', '--out', os.path.join(a.out, f'brown-multitopic-{k}.kvt')]]
    for i, d in enumerate(float(x) for x in a.depths.split(',')):
        runs.append(['--scenario', 'needle', '--depth', str(d), '--seed', str(100 + i), '--steps', '64',
                     '--out', os.path.join(a.out, f'brown-needle-{k}-d{round(d * 100):02d}.kvt')])
    if a.train_haystack:
        runs.append(['--scenario', 'needle', '--depth', '0.5', '--seed', '200', '--steps', '64', '--haystack', 'train',
                     '--out', os.path.join(a.out, f'brown-needle-{k}-train-d50.kvt')])
    for r in runs:
        capture.main(base + r)


if __name__ == '__main__':
    main()
