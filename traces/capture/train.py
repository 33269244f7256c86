"""Train the reference model: a small GPT (RoPE, GQA) on the Brown corpus with passkey sequences
mixed in, under a wall-clock budget, with a length curriculum.

    python3 traces/capture/train.py --data .device/capture/data --out /tmp/ckpt --max-seconds 390

Schedule: progress p = max(step / --steps, elapsed / --max-seconds). Phases by p (sequence
length, batch, passkey share) keep tokens per step constant; the learning rate warms up for
--warmup steps, then follows a cosine from --lr to --lr/10 over p. Every step's (sequence
length, passkey share, lr) goes into recipe.json, and `--replay recipe.json` repeats that exact
schedule step by step (the GPU's kernels are not bitwise deterministic, so a replay agrees in
loss curve, not bit for bit).
"""
import argparse
import contextlib
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # keep traces/capture/ free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from brown import load_jsonl  # noqa: E402
from checkpoint import save_checkpoint  # noqa: E402
from model import GPT, GPTConfig  # noqa: E402
from passkey import build_passkey, passkey_digits  # noqa: E402
from tokenizer import BOS, EOD, WordTokenizer  # noqa: E402

# (progress at which the phase starts, sequence length, passkey share): short retrieval-heavy first
PHASES = [(0.0, 512, 0.5), (0.2, 1024, 0.4), (0.4, 2048, 0.35), (0.6, 4096, 0.3), (0.8, 8192, 0.3)]
# with --max-seq above 8192 (the 32k captures): the same lengths sooner, then 16k and 32k
LONG_PHASES = [(0.0, 512, 0.5), (0.15, 1024, 0.4), (0.3, 2048, 0.35), (0.45, 4096, 0.3), (0.6, 8192, 0.3),
               (0.75, 16384, 0.3), (0.88, 32768, 0.3)]


def phases_for(max_len: int) -> list:
    return PHASES if max_len <= 8192 else LONG_PHASES


def phase_at(p: float, max_len: int):
    phases = phases_for(max_len)
    cur = phases[0]
    for ph in phases:
        if p >= ph[0]:
            cur = ph
    return min(cur[1], max_len), cur[2]


class Data:
    def __init__(self, texts: list, tok: WordTokenizer, seed: int):
        rng = random.Random(seed)
        train = [t for t in texts if not t['held_out']]
        rng.shuffle(train)
        stream = []
        for t in train:
            stream += tok.encode(t['text']) + [EOD]
        self.train = np.array(stream, dtype=np.int64)
        held = [t for t in texts if t['held_out']]
        self.held = np.array(sum((tok.encode(t['text']) + [EOD] for t in held), []), dtype=np.int64)
        self.tok = tok

    def window(self, rng: random.Random, n: int, held: bool = False) -> list:
        src = self.held if held else self.train
        i = rng.randrange(0, len(src) - n)
        return src[i:i + n].tolist()


def make_batch(data: Data, rng: random.Random, batch: int, seq: int, share: float, held: bool = False, depth=None):
    """ids [B, seq+1] (inputs ids[:, :-1], targets ids[:, 1:]) and a per-target answer mask."""
    ids = np.zeros((batch, seq + 1), dtype=np.int64)
    ans = np.zeros((batch, seq), dtype=np.float32)
    for b in range(batch):
        if rng.random() < share:
            digits = passkey_digits(rng)
            d = rng.random() if depth is None else depth
            row, _, (a0, a1) = build_passkey(data.tok.encode, data.window(rng, seq + 1, held), digits, d, seq + 1, bos=BOS)
            ids[b] = row
            ans[b, a0 - 1:a1 - 1] = 1.0  # target t is ids[t + 1]
        else:
            ids[b] = [BOS] + data.window(rng, seq, held)
    return torch.from_numpy(ids), torch.from_numpy(ans)


def autocast(device: str):
    """bf16 autocast on CUDA; nothing on CPU (torch 1.13's CPU build refuses a CUDA autocast)."""
    if device == 'cuda':
        return torch.autocast('cuda', dtype=torch.bfloat16)
    return contextlib.nullcontext()


def loss_fn(model, ids, ans, answer_weight: float):
    logits = model(ids[:, :-1])
    ce = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction='none').view(ids.shape[0], -1)
    lm = ce.mean()
    n_ans = ans.sum()
    pk = (ce * ans).sum() / n_ans if n_ans > 0 else torch.zeros((), device=ce.device)
    return lm + answer_weight * pk, lm, pk


@torch.no_grad()
def evaluate(model, data: Data, device: str, seed: int, lengths=(1024, 4096, 8192), trials: int = 16) -> dict:
    model.eval()
    rng = random.Random(seed + 1)
    out = {'passkey': [], 'val_loss': {}}
    for held in (False, True):
        ids, ans = make_batch(data, rng, 4, 2048, 0.0, held)
        with autocast(device):
            _, lm, _ = loss_fn(model, ids.to(device), ans.to(device), 0.0)
        out['val_loss']['held_out' if held else 'train'] = round(float(lm), 4)
    for n in lengths:
        if n > model.cfg.max_seq:
            continue
        for held in (False, True):
            correct, depth_hits = 0, []
            for t in range(trials):
                depth = (t + 0.5) / trials
                ids, ans = make_batch(data, rng, 1, n - 1, 1.0, held, depth=depth)
                ids = ids.to(device)
                with autocast(device):
                    logits = model(ids[:, :-1])
                pred = logits[0].argmax(-1)
                m = ans[0].bool().to(device)
                ok = bool((pred[m] == ids[0, 1:][m]).all())
                correct += ok
                depth_hits.append([round(depth, 3), ok])
            out['passkey'].append({'tokens': n, 'haystack': 'held-out' if held else 'train', 'correct': correct,
                                   'trials': trials, 'by_depth': depth_hits})
    model.train()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--data', required=True, help='directory with brown.jsonl and vocab.json (prepare_corpus.py)')
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, default=1234)
    ap.add_argument('--steps', type=int, default=100000, help='most steps (the time budget usually ends first)')
    ap.add_argument('--max-seconds', type=float, default=390)
    ap.add_argument('--tokens-per-step', type=int, default=65536)
    ap.add_argument('--lr', type=float, default=2e-3)
    ap.add_argument('--warmup', type=int, default=150)
    ap.add_argument('--weight-decay', type=float, default=0.1)
    ap.add_argument('--answer-weight', type=float, default=1.0, help='extra loss weight on the passkey answer digits')
    ap.add_argument('--layers', type=int, default=8)
    ap.add_argument('--d-model', type=int, default=384)
    ap.add_argument('--heads', type=int, default=6)
    ap.add_argument('--kv-heads', type=int, default=2)
    ap.add_argument('--ffn', type=int, default=1024)
    ap.add_argument('--max-seq', type=int, default=8192)
    ap.add_argument('--replay', help='recipe.json of an earlier run: repeat its schedule step by step')
    ap.add_argument('--eval-lengths', default='1024,4096,8192')
    a = ap.parse_args()

    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    if device == 'cuda':
        torch.backends.cuda.matmul.allow_tf32 = True
    tok = WordTokenizer.load(os.path.join(a.data, 'vocab.json'))
    data = Data(load_jsonl(os.path.join(a.data, 'brown.jsonl')), tok, a.seed)
    cfg = GPTConfig(vocab_size=len(tok), layers=a.layers, d_model=a.d_model, n_heads=a.heads,
                    n_kv_heads=a.kv_heads, ffn_hidden=a.ffn, max_seq=a.max_seq)
    model = GPT(cfg).to(device)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt_kw = {'fused': True} if device == 'cuda' else {}
    opt = torch.optim.AdamW([{'params': decay, 'weight_decay': a.weight_decay}, {'params': no_decay, 'weight_decay': 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), **opt_kw)
    replay = None
    if a.replay:
        with open(a.replay) as f:
            replay = json.load(f)['schedule']
    print(f'{sum(p.numel() for p in model.parameters()) / 1e6:.2f} M parameters, {len(data.train)} training tokens, '
          f'{len(data.held)} held-out, device {device}', flush=True)

    curve, schedule = [], []
    t0 = time.time()
    step = 0
    while True:
        if replay is not None:
            if step >= len(replay):
                break
            seq, share, lr = replay[step]
        else:
            p = max(step / a.steps, (time.time() - t0) / a.max_seconds)
            if p >= 1:
                break
            seq, share = phase_at(p, a.max_seq)
            lr = a.lr * min(1.0, (step + 1) / a.warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * p)))
        for g in opt.param_groups:
            g['lr'] = lr
        batch = max(1, a.tokens_per_step // seq)
        ids, ans = make_batch(data, rng, batch, seq, share)
        ids, ans = ids.to(device, non_blocking=True), ans.to(device, non_blocking=True)
        with autocast(device):
            loss, lm, pk = loss_fn(model, ids, ans, a.answer_weight)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        schedule.append([seq, share, round(lr, 8)])
        if step % 25 == 0:
            entry = {'step': step, 'seconds': round(time.time() - t0, 1), 'seq_len': seq, 'lr': round(lr, 6),
                     'loss': round(float(lm.detach()), 4), 'passkey_loss': round(float(pk.detach()), 4)}
            curve.append(entry)
            if step % 250 == 0:
                print(json.dumps(entry), flush=True)
        step += 1
    train_seconds = time.time() - t0
    ev = evaluate(model, data, device, a.seed, tuple(int(x) for x in a.eval_lengths.split(',')))
    print(json.dumps(ev), flush=True)
    recipe = {
        'seed': a.seed, 'steps': step, 'train_seconds': round(train_seconds, 1), 'args': vars(a),
        'phases': [{'from_progress': f, 'seq_len': s, 'passkey_share': sh} for f, s, sh in phases_for(a.max_seq)],
        'tokens_seen': int(sum(a.tokens_per_step // s * s for s, _, _ in schedule)),
        'corpus': {'train_tokens': int(len(data.train)), 'held_out_tokens': int(len(data.held))},
        'device': torch.cuda.get_device_name(0) if device == 'cuda' else 'cpu', 'torch': torch.__version__,
        'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
        'loss_curve': curve, 'eval': ev, 'schedule': schedule,
    }
    manifest = save_checkpoint(model, tok, a.out, {'recipe': 'recipe.json'})
    with open(os.path.join(a.out, 'recipe.json'), 'w') as f:
        json.dump(recipe, f)
    print(f'saved {a.out}: sha256 {manifest["sha256"][:16]}, {step} steps in {train_seconds:.0f} s', flush=True)


if __name__ == '__main__':
    main()
