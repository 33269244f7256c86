"""The kvtier checkpoint directory: kvtier-model.json (architecture, tokenizer, shard list with
sha256), vocab.json, and model-<i>.pt shards of bf16 tensors, each below a size cap (the GPU
machine returns files of at most 16 MiB)."""
import hashlib
import json
import os

import torch

from model import GPT, GPTConfig
from tokenizer import WordTokenizer

MANIFEST = 'kvtier-model.json'


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
    return h.hexdigest()


def save_checkpoint(model: GPT, tok: WordTokenizer, out: str, extra: dict, shard_bytes: int = 12 << 20) -> dict:
    os.makedirs(out, exist_ok=True)
    shards, cur, size = [], {}, 0
    for name, t in model.state_dict().items():
        t = t.detach().to('cpu', torch.bfloat16).contiguous()
        if cur and size + t.numel() * 2 > shard_bytes:
            shards.append(cur)
            cur, size = {}, 0
        cur[name] = t
        size += t.numel() * 2
    shards.append(cur)
    files = []
    for i, s in enumerate(shards):
        path = os.path.join(out, f'model-{i}.pt')
        torch.save(s, path)
        files.append({'file': f'model-{i}.pt', 'sha256': sha256_file(path), 'bytes': os.path.getsize(path)})
    tok.save(os.path.join(out, 'vocab.json'))
    manifest = {'kind': 'kvtier-gpt', 'config': model.cfg.to_dict(), 'dtype': 'bfloat16', 'tokenizer': 'vocab.json',
                'shards': files, 'params': sum(p.numel() for p in model.parameters()),
                'sha256': checkpoint_hash(files), **extra}
    with open(os.path.join(out, MANIFEST), 'w') as f:
        json.dump(manifest, f, indent=1)
    return manifest


def checkpoint_hash(files: list) -> str:
    """One hash for the checkpoint: sha256 over the shards' sha256 values in order."""
    return hashlib.sha256(''.join(f['sha256'] for f in files).encode()).hexdigest()


def is_checkpoint(path: str) -> bool:
    return os.path.isfile(os.path.join(path, MANIFEST))


def load_checkpoint(path: str, device: str = 'cpu', verify: bool = True):
    with open(os.path.join(path, MANIFEST)) as f:
        manifest = json.load(f)
    cfg = GPTConfig(**manifest['config'])
    model = GPT(cfg)
    state = {}
    for s in manifest['shards']:
        p = os.path.join(path, s['file'])
        if verify and sha256_file(p) != s['sha256']:
            raise SystemExit(f'{p}: sha256 differs from {MANIFEST} (damaged or replaced shard)')
        try:
            part = torch.load(p, map_location='cpu', weights_only=True)
        except TypeError:  # torch < 1.13
            part = torch.load(p, map_location='cpu')
        state.update(part)
    model.load_state_dict({k: v.float() for k, v in state.items()})
    tok = WordTokenizer.load(os.path.join(path, manifest['tokenizer']))
    return model.to(device).eval(), tok, manifest
