"""
Device-side pace of single-block copies by the layout of their host slots, free of the host's issue
pace: N pinned-host <-> HBM copies captured in a CUDA graph as one chain and replayed, the copy i's
host bytes at
  - packed:    i * bytes (byte-contiguous),
  - stride-S:  i * S (consecutive slots S bytes apart, as the HIL's host pool lays blocks out),
  - random-R:  a random slot of `bytes` within the first R bytes of the pool (no repeats).
Idle GPU otherwise. One JSON object per (direction, bytes, layout): us per copy, the median of the replays.
"""
import json
import torch

torch.cuda.init()
dev = torch.device('cuda')
print(json.dumps({'device': torch.cuda.get_device_name(0), 'torch': torch.__version__, 'cuda': torch.version.cuda}), flush=True)
HOST = 4 << 30
host = torch.empty(HOST, dtype=torch.uint8, pin_memory=True)
hbm = torch.empty(2 << 30, dtype=torch.uint8, device=dev)
gen = torch.Generator().manual_seed(7)
mem = torch.cuda.Stream()
N = 2000


def offsets(size, layout):
    kind, _, arg = layout.partition('-')
    if kind == 'packed':
        return [i * size for i in range(N)]
    if kind == 'stride':
        s = int(arg)
        return [i * s for i in range(N)]
    span = int(arg)
    slots = span // size
    return [p * size for p in torch.randperm(slots, generator=gen)[:N].tolist()]


def pace(size, layout, direction, reps=7):
    offs = offsets(size, layout)
    g = torch.cuda.CUDAGraph()
    torch.cuda.synchronize()
    with torch.cuda.graph(g, stream=mem):
        for i, o in enumerate(offs):
            d = hbm[i * 65536:i * 65536 + size]
            h = host[o:o + size]
            if direction == 'h2d':
                d.copy_(h, non_blocking=True)
            else:
                h.copy_(d, non_blocking=True)
    g.replay()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(mem):
            a.record(mem)
            g.replay()
            b.record(mem)
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b) * 1000 / N)
    out.sort()
    return out[len(out) // 2], out[0], out[-1]


MB = 1 << 20
layouts = ['packed', 'stride-65536', 'stride-131072', 'stride-262144', 'stride-2097152',
           f'random-{2 * MB}', f'random-{16 * MB}', f'random-{128 * MB}', f'random-{1024 * MB}', f'random-{4096 * MB}']
for direction in ['h2d', 'd2h']:
    for size in [9216, 17408, 33792, 65536]:
        row = {'direction': direction, 'bytes': size}
        for layout in layouts:
            if layout.startswith('random') and int(layout.split('-')[1]) // size < N:
                continue
            med, lo, hi = pace(size, layout, direction)
            row[layout] = round(med, 3)
            row[layout + ':range'] = [round(lo, 3), round(hi, 3)]
        print(json.dumps(row), flush=True)
