"""Capture an attention trace (.kvt, traces/FORMAT.md) from a causal LM.

    python3 traces/capture/capture.py --model PATH --scenario long --corpus brown.jsonl \
        --prompt-tokens 8192 --steps 512 --out traces/captured/long.kvt

PATH is a kvtier checkpoint (train.py) or any local Hugging Face causal-LM directory (loaded with
eager attention; --dtype bfloat16 for large models). The prompt is prefilled in chunks of
--prefill-chunk tokens (its attention is summarised per block in the header's
`prefill_attention`), then --steps tokens are decoded one at a time; each decode step's attention
of every layer, averaged over the query heads of each KV-head group and summed per block, is one
step record. The header's `tokens` holds the prompt and the generated ids, `capture_stats` the
token-level statistics, and `provenance` everything needed to redo it.
"""
import argparse
import datetime
import os
import platform
import sys
import time

import torch

sys.dont_write_bytecode = True  # keep traces/capture/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scenarios  # noqa: E402
from backends import load_backend  # noqa: E402
from brown import load_jsonl  # noqa: E402
from checkpoint import sha256_file  # noqa: E402
from kvt_writer import KvtWriter  # noqa: E402
from recorder import Recorder  # noqa: E402

SINK_THRESHOLD = 0.1  # a layer "has a sink" when its first 4 tokens get more than this share on average


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--model', required=True, help='kvtier checkpoint or Hugging Face model directory')
    ap.add_argument('--out', required=True, help='the .kvt file to write')
    ap.add_argument('--scenario', default='long', choices=['long', 'multi-topic', 'needle', 'text', 'random'])
    ap.add_argument('--corpus', help='brown.jsonl (prepare_corpus.py) for long, multi-topic, needle')
    ap.add_argument('--text', help='a UTF-8 text file for --scenario text')
    ap.add_argument('--prompt-tokens', type=int, default=8192)
    ap.add_argument('--steps', type=int, default=512)
    ap.add_argument('--depth', type=float, default=0.5, help='needle depth in the haystack, 0..1')
    ap.add_argument('--haystack', default='held-out', choices=['held-out', 'train'])
    ap.add_argument('--topics', type=int, default=4)
    ap.add_argument('--block-size', type=int, default=16)
    ap.add_argument('--kv-groups', type=int, help='rows per layer: default one per KV head; 1 averages all heads')
    ap.add_argument('--encoding', default='topk', choices=['topk', 'dense'])
    ap.add_argument('--topk', type=int, default=64)
    ap.add_argument('--decode', choices=['sample', 'greedy'], help='default greedy for needle, else sample')
    ap.add_argument('--temperature', type=float, default=0.8)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--prefill-chunk', type=int, default=1024)
    ap.add_argument('--device', default='auto')
    ap.add_argument('--dtype', default='float32', choices=['float32', 'bfloat16', 'float16'], help='Hugging Face models only')
    ap.add_argument('--name', help='model name in the trace header (default: the model directory name)')
    ap.add_argument('--note', action='append', default=[], help='a line for provenance.notes (repeatable)')
    ap.add_argument('--force', action='store_true', help='replace --out if it exists')
    return ap.parse_args(argv)


def build_prompt(a, be):
    if a.scenario == 'random':
        return scenarios.random_tokens(be.vocab_size, a.prompt_tokens, a.seed)
    if be.encode is None:
        raise SystemExit(f'--scenario {a.scenario} needs a tokenizer; this model has none (use --scenario random)')
    if a.scenario == 'text':
        if not a.text:
            raise SystemExit('--scenario text needs --text FILE')
        return scenarios.text_file(be.encode, be.bos_id, a.text, a.prompt_tokens)
    if not a.corpus:
        raise SystemExit(f'--scenario {a.scenario} needs --corpus brown.jsonl (traces/capture/prepare_corpus.py)')
    texts = load_jsonl(a.corpus)
    if a.scenario == 'long':
        ids, info = scenarios.long_document(be.encode, be.bos_id, texts, a.prompt_tokens)
    elif a.scenario == 'multi-topic':
        ids, info = scenarios.multi_topic(be.encode, be.bos_id, texts, a.prompt_tokens, a.topics)
    else:
        ids, info = scenarios.needle(be.encode, be.bos_id, texts, a.prompt_tokens, a.depth, a.seed, a.haystack)
    info['corpus_sha256'] = sha256_file(a.corpus)
    return ids, info


def main(argv=None) -> None:
    a = parse_args(argv)
    device = ('cuda' if torch.cuda.is_available() else 'cpu') if a.device == 'auto' else a.device
    t0 = time.time()
    be = load_backend(a.model, device, a.dtype)
    kv_groups = a.kv_groups or be.n_kv_heads
    decode_mode = a.decode or ('greedy' if a.scenario == 'needle' else 'sample')
    prompt, info = build_prompt(a, be)
    span = tuple(info['needle_tokens']) if 'needle_tokens' in info else None
    rec = Recorder(be.layers, be.n_heads, be.n_kv_heads, kv_groups, a.block_size,
                   a.topk if a.encoding == 'topk' else None, len(prompt), span=span)
    gen = torch.Generator().manual_seed(a.seed)

    def choose(logits):
        if decode_mode == 'greedy':
            return int(logits.argmax())
        p = torch.softmax(logits.cpu().double() / a.temperature, -1)
        return int(torch.multinomial(p, 1, generator=gen))

    header = {
        'model': a.name or be.describe['path'], 'layers': be.layers, 'block_size': a.block_size,
        'prompt_tokens': len(prompt), 'steps': a.steps, 'kv_groups': kv_groups, 'encoding': a.encoding,
        'provenance': {},  # filled below; the header is written at the end (it holds the outcome)
    }
    if a.encoding == 'topk':
        header['topk'] = a.topk
    be.reset()
    logits = None
    for pos in range(0, len(prompt), a.prefill_chunk):
        chunk = torch.tensor([prompt[pos:pos + a.prefill_chunk]], dtype=torch.long)
        logits, probs, norms = be.step(chunk)
        rec.prefill(probs, norms, pos)
        del probs
    rows_per_step, generated = [], []
    nxt = choose(logits[-1])
    for s in range(a.steps):
        generated.append(nxt)
        logits, probs, norms = be.step(torch.tensor([[nxt]], dtype=torch.long))
        rows_per_step.append(rec.decode(probs, norms))
        nxt = choose(logits[-1])
    stats = rec.summary()
    sink_layers = [l for l, v in enumerate(stats['sink4']) if v > SINK_THRESHOLD]
    observed = {'sinks': (f'attention sinks (first 4 tokens > {SINK_THRESHOLD:.0%} of the mass on average) in layers {sink_layers}'
                          if sink_layers else
                          f'no attention sinks formed: the first 4 tokens get at most {max(stats["sink4"]):.4f} of any layer\'s mass')}
    if a.scenario == 'needle':
        want = info['answer_ids']
        got = generated[:len(want)]
        info['generated_answer'] = got
        info['retrieved'] = got == want
        observed['retrieval'] = ('the passkey was retrieved (greedy answer = passkey)' if got == want else
                                 'the passkey was NOT retrieved (greedy answer differs)')
        best = max(range(be.layers), key=lambda l: stats['span_mass_best_head'][l])
        observed['needle_attention'] = (f'best head: {stats["span_mass_best_head"][best]:.3f} of its mass on the needle '
                                        f'(layer {best}) at some decode step')
    header['provenance'] = {
        'source': 'capture', 'tool': 'traces/capture/capture.py', 'command': ' '.join(['python3', 'traces/capture/capture.py'] + (argv or sys.argv[1:])),
        'date': datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'),
        'device': torch.cuda.get_device_name(0) if device == 'cuda' else f'cpu ({platform.machine()})',
        'torch': torch.__version__, 'compute_dtype': 'float32 softmax' if be.describe['kind'] == 'kvtier-gpt' else a.dtype,
        'model': be.describe, 'text': info,
        'decode': {'mode': decode_mode, 'temperature': a.temperature if decode_mode == 'sample' else None, 'seed': a.seed},
        'averaging': f'attention probabilities of the decode query, averaged over the {be.n_heads // kv_groups} query heads of '
                     f'each of {kv_groups} KV-head groups, summed over each block of {a.block_size} tokens',
        'key_norms': 'L2 norm of each token\'s key after RoPE (a rotation: same norm), max over the block\'s tokens and the group\'s KV heads',
        'observed': observed, 'notes': a.note, 'seconds': round(time.time() - t0, 1),
    }
    header['tokens'] = {'prompt': prompt, 'generated': generated}
    header['prefill_attention'] = rec.prefill_summary()
    header['capture_stats'] = stats
    w = KvtWriter(a.out, header, overwrite=a.force)
    try:
        for rows in rows_per_step:
            w.write_step(rows)
        w.close()
    except BaseException:
        w.abort()
        raise
    print(f'{a.out}: {be.layers} layers x {kv_groups} groups, prompt {len(prompt)}, {a.steps} steps, '
          f'{os.path.getsize(a.out) / 1e6:.2f} MB, {time.time() - t0:.1f} s; ' + '; '.join(observed.values()), flush=True)


if __name__ == '__main__':
    main()
