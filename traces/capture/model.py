"""A small GPT-style causal LM: rotary positions, grouped-query attention, RMSNorm, SwiGLU, tied
embeddings. Runs on torch 1.13 (CPU) and 2.x (CUDA).

Two ways through the attention:
  - training (`forward(ids)`): fused scaled_dot_product_attention where torch has it (2.x), else
    explicit softmax;
  - capture (`step(ids, cache)`): explicit float32 softmax over a KV cache, returning every layer's
    attention probabilities and the new tokens' key norms. This is the path the traces come from.
"""
import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class GPTConfig:
    vocab_size: int = 8192
    layers: int = 8
    d_model: int = 384
    n_heads: int = 6
    n_kv_heads: int = 2
    ffn_hidden: int = 1024
    rope_base: float = 10000.0
    max_seq: int = 8192

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def to_dict(self) -> dict:
        return asdict(self)


def rope_tables(cfg: GPTConfig, positions: torch.Tensor):
    """cos, sin of shape [T, head_dim/2] for the given absolute positions."""
    half = cfg.head_dim // 2
    inv = 1.0 / (cfg.rope_base ** (torch.arange(0, half, dtype=torch.float32, device=positions.device) / half))
    ang = positions.to(torch.float32)[:, None] * inv[None, :]
    return ang.cos(), ang.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x [..., T, head_dim]: rotate the pairs (x[i], x[i + half]) (GPT-NeoX / Llama layout)."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    c, s = cos.to(x.dtype), sin.to(x.dtype)
    return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1)


class RMSNorm(nn.Module):
    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


class Attention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        hd = cfg.head_dim
        self.wq = nn.Linear(cfg.d_model, cfg.n_heads * hd, bias=False)
        self.wk = nn.Linear(cfg.d_model, cfg.n_kv_heads * hd, bias=False)
        self.wv = nn.Linear(cfg.d_model, cfg.n_kv_heads * hd, bias=False)
        self.wo = nn.Linear(cfg.n_heads * hd, cfg.d_model, bias=False)

    def qkv(self, x, cos, sin):
        b, t, _ = x.shape
        c = self.cfg
        q = self.wq(x).view(b, t, c.n_heads, c.head_dim).transpose(1, 2)
        k = self.wk(x).view(b, t, c.n_kv_heads, c.head_dim).transpose(1, 2)
        v = self.wv(x).view(b, t, c.n_kv_heads, c.head_dim).transpose(1, 2)
        return apply_rope(q, cos, sin), apply_rope(k, cos, sin), v

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        c = self.cfg
        q, k, v = self.qkv(x, cos, sin)
        g = c.n_heads // c.n_kv_heads
        k = k.repeat_interleave(g, dim=1)
        v = v.repeat_interleave(g, dim=1)
        if hasattr(F, 'scaled_dot_product_attention'):
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-1, -2)) / math.sqrt(c.head_dim)
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
            y = att.float().masked_fill(mask, float('-inf')).softmax(-1).to(q.dtype) @ v
        return self.wo(y.transpose(1, 2).reshape(b, t, -1))

    def step(self, x, cos, sin, cache: dict, layer: int):
        """x [1, C, d] at absolute positions cache['pos'] .. +C-1. Returns (out, probs [H, C, T], key norms [KV, C])."""
        c = self.cfg
        q, k, v = self.qkv(x, cos, sin)
        kc, vc = cache['k'][layer], cache['v'][layer]
        kc = k if kc is None else torch.cat([kc, k], dim=2)
        vc = v if vc is None else torch.cat([vc, v], dim=2)
        cache['k'][layer], cache['v'][layer] = kc, vc
        n = x.shape[1]
        total = kc.shape[2]
        g = c.n_heads // c.n_kv_heads
        qf = q.float().view(1, c.n_kv_heads, g * n, c.head_dim)
        scores = (qf @ kc.float().transpose(-1, -2)).view(1, c.n_kv_heads, g, n, total) / math.sqrt(c.head_dim)
        qpos = torch.arange(total - n, total, device=x.device)
        kpos = torch.arange(total, device=x.device)
        scores = scores.masked_fill(kpos[None, :] > qpos[:, None], float('-inf'))
        probs = scores.softmax(-1)  # [1, KV, g, n, T]
        y = (probs.view(1, c.n_kv_heads, g * n, total) @ vc.float()).view(1, c.n_heads, n, c.head_dim)
        out = self.wo(y.to(x.dtype).transpose(1, 2).reshape(1, n, -1))
        return out, probs.view(c.n_heads, n, total), k[0].float().norm(dim=-1)


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n1 = RMSNorm(cfg.d_model)
        self.attn = Attention(cfg)
        self.n2 = RMSNorm(cfg.d_model)
        self.w1 = nn.Linear(cfg.d_model, cfg.ffn_hidden, bias=False)
        self.w3 = nn.Linear(cfg.d_model, cfg.ffn_hidden, bias=False)
        self.w2 = nn.Linear(cfg.ffn_hidden, cfg.d_model, bias=False)

    def mlp(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))

    def forward(self, x, cos, sin):
        x = x + self.attn(self.n1(x), cos, sin)
        return x + self.mlp(self.n2(x))


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = RMSNorm(cfg.d_model)
        self.apply(self._init)
        for b in self.blocks:  # scaled residual projections (GPT-2)
            nn.init.normal_(b.attn.wo.weight, std=0.02 / math.sqrt(2 * cfg.layers))
            nn.init.normal_(b.w2.weight, std=0.02 / math.sqrt(2 * cfg.layers))

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)

    def logits(self, h):
        return self.norm(h) @ self.emb.weight.t()  # tied embeddings

    def forward(self, ids):
        """ids [B, T] -> logits [B, T, V] (training; positions 0 .. T-1)."""
        cos, sin = rope_tables(self.cfg, torch.arange(ids.shape[1], device=ids.device))
        h = self.emb(ids)
        for b in self.blocks:
            h = b(h, cos, sin)
        return self.logits(h)

    def new_cache(self) -> dict:
        return {'pos': 0, 'k': [None] * self.cfg.layers, 'v': [None] * self.cfg.layers}

    @torch.no_grad()
    def step(self, ids, cache: dict):
        """Capture: ids [1, C] after the cached context -> (logits [C, V], probs per layer, key norms per layer)."""
        n = ids.shape[1]
        cos, sin = rope_tables(self.cfg, torch.arange(cache['pos'], cache['pos'] + n, device=ids.device))
        h = self.emb(ids)
        probs, norms = [], []
        for i, b in enumerate(self.blocks):
            a, p, kn = b.attn.step(b.n1(h), cos, sin, cache, i)
            h = h + a
            h = h + b.mlp(b.n2(h))
            probs.append(p)
            norms.append(kn)
        cache['pos'] += n
        return self.logits(h)[0].float(), probs, norms
