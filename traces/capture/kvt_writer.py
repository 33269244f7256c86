"""Writer of the kvtier attention trace format (.kvt, version 1; traces/FORMAT.md), numpy only.

The same layout as FORMAT.md's sketch, plus the writer's checks (row count, masses in [0, 1] that
sum to 1 with the remainder within 1e-3) and a crash-safe `.partial` file that `abort()` removes.
"""
import json
import os

import numpy as np

MASS_TOLERANCE = 1e-3


def kvt_checksum(data: bytes) -> int:
    w = np.frombuffer(data, dtype='<u4').astype(np.uint64)
    k = 2 * np.arange(w.size, dtype=np.uint64) + 1
    return int((w * k).sum(dtype=np.uint64) & np.uint64(0xFFFFFFFF))


class KvtWriter:
    """rows: per step, layers * kv_groups tuples (mass, idx or None, remainder, norm_from, norms)."""

    def __init__(self, path: str, header: dict, overwrite: bool = False):
        for key in ('model', 'layers', 'block_size', 'prompt_tokens', 'steps', 'kv_groups', 'encoding', 'provenance'):
            if key not in header:
                raise ValueError(f'kvt header: missing field {key!r}')
        if os.path.exists(path) and not overwrite:
            raise FileExistsError(f'{path} exists (pass overwrite=True / --force to replace it)')
        self.path = path
        self.header = {'format': 'kvtier-attention-trace', 'version': 1, **header}
        self.steps = 0
        self.f = open(path + '.partial', 'wb')
        js = json.dumps(self.header, separators=(',', ':'), allow_nan=False).encode('utf-8')
        js += b' ' * (-len(js) % 4)
        self.f.write(b'KVTRACE\0' + np.array([1, len(js), kvt_checksum(js)], '<u4').tobytes() + js)

    def n_blocks(self) -> int:
        h = self.header
        return -(-(h['prompt_tokens'] + self.steps + 1) // h['block_size'])

    def write_step(self, rows) -> None:
        h = self.header
        if len(rows) != h['layers'] * h['kv_groups']:
            raise ValueError(f'step {self.steps}: {len(rows)} rows, expected layers * kv_groups = {h["layers"] * h["kv_groups"]}')
        n_blocks = self.n_blocks()
        topk = h['encoding'] == 'topk'
        parts = []
        for r, (mass, idx, remainder, norm_from, norms) in enumerate(rows):
            mass = np.asarray(mass, '<f4')
            norms = np.asarray(norms, '<f4')
            total = float(mass.astype(np.float64).sum()) + float(remainder)
            if not (np.all(np.isfinite(mass)) and mass.min(initial=0) >= 0 and mass.max(initial=0) <= 1
                    and 0 <= remainder <= 1 and abs(total - 1) <= MASS_TOLERANCE):
                raise ValueError(f'step {self.steps} row {r}: masses must lie in [0, 1] and sum to 1 with the remainder, got {total}')
            if topk and (idx is None or len(idx) != mass.size or mass.size > h['topk']):
                raise ValueError(f'step {self.steps} row {r}: topk rows need idx of the masses\' length <= topk')
            if not topk and mass.size != n_blocks:
                raise ValueError(f'step {self.steps} row {r}: dense rows need nBlocks = {n_blocks} masses, got {mass.size}')
            if norm_from + norms.size > n_blocks:
                raise ValueError(f'step {self.steps} row {r}: norms past the last block')
            parts.append(np.array([n_blocks, mass.size], '<u4').tobytes())
            parts.append(np.array([remainder], '<f4').tobytes())
            parts.append(np.array([norm_from, norms.size], '<u4').tobytes())
            if topk:
                parts.append(np.asarray(idx, '<u4').tobytes())
            parts += [mass.tobytes(), norms.tobytes()]
        payload = b''.join(parts)
        self.f.write(b'KVST' + np.array([self.steps, len(payload), kvt_checksum(payload)], '<u4').tobytes() + payload)
        self.steps += 1

    def close(self) -> None:
        if self.steps != self.header['steps']:
            raise ValueError(f'{self.path}: {self.steps} steps written, the header declares {self.header["steps"]}')
        self.f.write(b'KEND' + np.array([self.steps, 0, 0], '<u4').tobytes())
        self.f.close()
        os.replace(self.path + '.partial', self.path)

    def abort(self) -> None:
        self.f.close()
        if os.path.exists(self.path + '.partial'):
            os.remove(self.path + '.partial')
