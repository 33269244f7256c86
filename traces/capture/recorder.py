"""From a layer's attention probabilities to trace rows and capture statistics.

Conventions (what the trace's provenance states):
  - mass of block b for KV group g = mean over the query heads of g of the sum of the attention
    probabilities over b's tokens (block_size tokens; the last block may be partial);
  - key norm of a block = max over its tokens (and over the KV heads of the group) of the key's
    L2 norm (after RoPE, which is a rotation and keeps norms);
  - topk rows list the `topk` heaviest blocks (ascending block index) and the rest as remainder.
Token-level statistics (the published ones are token-level) are kept per layer over decode steps:
first-4-token mass, share of tokens below 1% of the head's row max, persistence of each head's
top-10% token set, and the mass on a marked span (the needle).
"""
import numpy as np
import torch


def block_sum(x: torch.Tensor, block: int) -> torch.Tensor:
    """[..., T] -> [..., ceil(T / block)] sums."""
    t = x.shape[-1]
    pad = -t % block
    if pad:
        x = torch.nn.functional.pad(x, (0, pad))
    return x.reshape(*x.shape[:-1], -1, block).sum(-1)


def block_max(x: torch.Tensor, block: int) -> torch.Tensor:
    t = x.shape[-1]
    pad = -t % block
    if pad:
        x = torch.nn.functional.pad(x, (0, pad))
    return x.reshape(*x.shape[:-1], -1, block).max(-1)[0]


class Recorder:
    def __init__(self, layers: int, n_heads: int, n_kv_heads: int, kv_groups: int, block: int, topk, prompt_tokens: int,
                 window: int = 32, span=None):
        if n_heads % n_kv_heads or n_kv_heads % kv_groups:
            raise ValueError(f'kv_groups ({kv_groups}) must divide the KV heads ({n_kv_heads}), which must divide the heads ({n_heads})')
        self.L, self.H, self.KV, self.G = layers, n_heads, n_kv_heads, kv_groups
        self.block, self.topk, self.P, self.window = block, topk, prompt_tokens, window
        self.span = span  # (start, end) token span whose mass is tracked (the needle), or None
        self.key_norms = [None] * layers  # [KV, T] per layer
        self.prefill_all = [None] * layers  # sum over prompt queries of the group's block masses
        self.prefill_win = [None] * layers
        self.prefill_queries = 0
        self.steps = 0
        self.prev_top = [None] * layers
        self.acc = {k: np.zeros(layers) for k in ('sink4', 'sink16', 'tok_sparsity', 'tok_persist', 'span_mass', 'span_head_max')}
        self.persist_n = 0

    def group_mean(self, probs: torch.Tensor) -> torch.Tensor:
        """[H, C, T] -> [G, C, T] averaged over each group's query heads (head h serves KV head h // (H/KV))."""
        return probs.reshape(self.G, self.H // self.G, *probs.shape[1:]).mean(1)

    def add_norms(self, layer: int, norms: torch.Tensor) -> None:
        kn = norms.float()
        self.key_norms[layer] = kn if self.key_norms[layer] is None else torch.cat([self.key_norms[layer], kn], dim=1)

    def prefill(self, probs: list, norms: list, pos0: int) -> None:
        """A prompt chunk at positions pos0 .. pos0 + C - 1: probs per layer [H, C, pos0 + C]."""
        c = probs[0].shape[1]
        total = pos0 + c
        n_blocks = -(-self.P // self.block)
        win_from = max(0, self.P - self.window - pos0)  # first query of this chunk inside the last-window
        for l in range(self.L):
            self.add_norms(l, norms[l])
            g = self.group_mean(probs[l])  # [G, C, T]
            sums = torch.nn.functional.pad(block_sum(g.sum(1), self.block), (0, n_blocks - -(-total // self.block)))
            self.prefill_all[l] = sums if self.prefill_all[l] is None else self.prefill_all[l] + sums
            if win_from < c:
                w = torch.nn.functional.pad(block_sum(g[:, win_from:].sum(1), self.block), (0, n_blocks - -(-total // self.block)))
                self.prefill_win[l] = w if self.prefill_win[l] is None else self.prefill_win[l] + w
        self.prefill_queries += c

    def prefill_summary(self) -> dict:
        def rows(acc, n):
            return [[round(float(v) / n, 6) for v in acc[l][g].cpu()] for l in range(self.L) for g in range(self.G)] if n else []
        return {
            'what': 'mass per prompt block (rows in trace order: layer * kv_groups + group), averaged over the '
                    'prompt queries (all) and over the last `window` prompt queries (SnapKV-style observation window)',
            'window': self.window,
            'all': rows(self.prefill_all, self.prefill_queries),
            'last_window': rows(self.prefill_win, min(self.window, self.P)),
        } if self.prefill_all[0] is not None else {}

    def decode(self, probs: list, norms: list) -> list:
        """One decode step: probs per layer [H, 1, T]; returns the trace rows."""
        rows = []
        self.steps += 1
        for l in range(self.L):
            self.add_norms(l, norms[l])
            p = probs[l][:, 0, :].float()  # [H, T]
            t = p.shape[-1]
            self.token_stats(l, p)
            mass = block_sum(self.group_mean(p[:, None, :])[:, 0, :], self.block)  # [G, nB]
            kn = block_max(self.key_norms[l].reshape(self.G, self.KV // self.G, -1).max(1)[0], self.block)  # [G, nB]
            n_blocks = mass.shape[-1]
            first = self.steps == 1
            for g in range(self.G):
                m = mass[g]
                norms_g = kn[g] if first else kn[g, -1:]
                norm_from = 0 if first else n_blocks - 1
                if self.topk is None:
                    rows.append((np.clip(m.cpu().numpy(), 0, 1), None, 0.0, norm_from, norms_g.cpu().numpy()))
                    continue
                k = min(self.topk, n_blocks)
                vals, idx = torch.topk(m, k)
                order = torch.argsort(idx)
                idx, vals = idx[order].cpu().numpy(), np.clip(vals[order].cpu().numpy(), 0, 1).astype(np.float32)  # float32 sums may pass 1 by an ulp
                rem = 0.0 if k == n_blocks else min(1.0, max(0.0, 1.0 - float(vals.astype(np.float64).sum())))
                rows.append((vals, idx, rem, norm_from, norms_g.cpu().numpy()))
            del t
        return rows

    def token_stats(self, l: int, p: torch.Tensor) -> None:
        h, t = p.shape
        a = self.acc
        a['sink4'][l] += float(p[:, :4].sum(-1).mean())
        a['sink16'][l] += float(p[:, :16].sum(-1).mean())
        a['tok_sparsity'][l] += float((p < 0.01 * p.max(-1, keepdim=True)[0]).float().mean())
        k = max(1, round(0.1 * t))
        top = torch.zeros(h, t, dtype=torch.bool, device=p.device)
        top.scatter_(1, torch.topk(p, k, dim=-1)[1], True)
        prev = self.prev_top[l]
        if prev is not None:
            kept = (top[:, :prev.shape[1]] & prev).sum(-1).float() / prev.sum(-1).float()
            a['tok_persist'][l] += float(kept.mean())
            if l == 0:
                self.persist_n += 1
        self.prev_top[l] = top
        if self.span is not None:
            s = p[:, self.span[0]:self.span[1]].sum(-1)
            a['span_mass'][l] += float(s.mean())
            a['span_head_max'][l] = max(a['span_head_max'][l], float(s.max()))

    def summary(self) -> dict:
        n = max(1, self.steps)
        a = self.acc
        out = {
            'what': 'token-level, per layer, averaged over decode steps and query heads: sink4/sink16 = mass on the first '
                    '4/16 tokens; tok_sparsity = share of tokens with probability < 1% of the head\'s row max; '
                    'tok_persist = share of a head\'s top-10% token set kept from one step to the next',
            'sink4': [round(v / n, 5) for v in a['sink4']],
            'sink16': [round(v / n, 5) for v in a['sink16']],
            'tok_sparsity': [round(v / n, 5) for v in a['tok_sparsity']],
            'tok_persist': [round(v / max(1, self.persist_n), 5) for v in a['tok_persist']],
        }
        if self.span is not None:
            out['span'] = list(self.span)
            out['span_mass_mean'] = [round(v / n, 5) for v in a['span_mass']]
            out['span_mass_best_head'] = [round(v, 5) for v in a['span_head_max']]
        return out
