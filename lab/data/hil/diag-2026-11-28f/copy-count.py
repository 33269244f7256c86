"""
Control for the replays: does a graph's time grow linearly with its copies, or does a chain carry a fixed
cost? N single 65,536-byte H2D copies (host slots consecutive, or random within 1 GiB of the pool),
captured in a CUDA graph and replayed, N from 100 to 8,000; the median of 9 replays in us, and per copy.
"""
import json
import torch

torch.cuda.init()
print(json.dumps({'device': torch.cuda.get_device_name(0)}), flush=True)
SLOT = 65536
host = torch.empty(1 << 30, dtype=torch.uint8, pin_memory=True)
hbm = torch.empty(8000 * SLOT, dtype=torch.uint8, device='cuda')
mem = torch.cuda.Stream()
gen = torch.Generator().manual_seed(5)


def replay_us(offs, size=SLOT, reps=9):
    g = torch.cuda.CUDAGraph()
    torch.cuda.synchronize()
    with torch.cuda.graph(g, stream=mem):
        for i, o in enumerate(offs):
            hbm[i * SLOT:i * SLOT + size].copy_(host[o:o + size], non_blocking=True)
    out = []
    for _ in range(reps + 1):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        with torch.cuda.stream(mem):
            a.record(mem)
            g.replay()
            b.record(mem)
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b) * 1000)
    out = sorted(out[1:])
    return out[len(out) // 2]


for layout in ['consecutive', 'random-1GiB']:
    for n in [100, 300, 800, 1800, 4000, 8000]:
        offs = [i * SLOT for i in range(n)] if layout == 'consecutive' else [p * SLOT for p in torch.randperm((1 << 30) // SLOT, generator=gen)[:n].tolist()]
        us = replay_us(offs)
        print(json.dumps({'layout': layout, 'copies': n, 'us': round(us, 1), 'us_per_copy': round(us / n, 3)}), flush=True)
