"""
Device-side pace of long chains of single-block copies, free of the host's issue pace.

Per (direction, block size, host-slot pattern, condition): the same N pinned-host <-> HBM copies
  - gated: issued by the host behind a GPU sleep on the same stream, then run back to back
    (N small enough for the launch queue), timed from the sleep's end to the last copy;
  - graph: captured in a CUDA graph as one chain and replayed (no host issue per copy at all).
Conditions: idle, or beside a stream of layer-sized GEMVs on a second stream.
Prints one JSON object per measurement: us per copy (the median of the repeats).
"""
import json, sys, time
import torch

torch.cuda.init()
dev = torch.device('cuda')
print(json.dumps({'device': torch.cuda.get_device_name(0), 'torch': torch.__version__, 'cuda': torch.version.cuda}), flush=True)
HOST = 3 << 30
host = torch.empty(HOST, dtype=torch.uint8, pin_memory=True)
hbm = torch.empty(1 << 30, dtype=torch.uint8, device=dev)
gen = torch.Generator().manual_seed(1)
mem = torch.cuda.Stream()
comp = torch.cuda.Stream()
W = torch.randn(14336, 4096, dtype=torch.float16, device=dev)
xv = torch.randn(4096, dtype=torch.float16, device=dev)
yv = torch.empty(14336, dtype=torch.float16, device=dev)


def host_offsets(n, size, pattern):
    if pattern == 'adjacent':
        return [i * size for i in range(n)]
    slots = HOST // size
    perm = torch.randperm(slots, generator=gen)[:n].tolist()
    return [p * size for p in perm]


def issue(n, size, pattern, direction):
    for i, o in enumerate(host_offsets(n, size, pattern)):
        d = hbm[i * size:(i + 1) * size]
        h = host[o:o + size]
        if direction == 'h2d':
            d.copy_(h, non_blocking=True)
        else:
            h.copy_(d, non_blocking=True)


GEMVS = 1500
gemv_graph = torch.cuda.CUDAGraph()
with torch.cuda.stream(comp):
    torch.mv(W, xv, out=yv)  # cuBLAS's handle and workspace, made before the capture
torch.cuda.synchronize()
with torch.cuda.graph(gemv_graph, stream=comp):
    for _ in range(GEMVS):
        torch.mv(W, xv, out=yv)
torch.cuda.synchronize()
t0 = torch.cuda.Event(enable_timing=True)
t1 = torch.cuda.Event(enable_timing=True)
t0.record(comp)
gemv_graph.replay()
t1.record(comp)
torch.cuda.synchronize()
print(json.dumps({'gemv_graph_ms': round(t0.elapsed_time(t1), 3), 'gemvs': GEMVS}), flush=True)


def busy(on):
    """a chain of layer-sized GEMVs on the compute stream (one graph launch) that outlasts the copies"""
    if on:
        with torch.cuda.stream(comp):
            gemv_graph.replay()


def gated(n, size, pattern, direction, cond, reps=5):
    out = []
    for _ in range(reps):
        torch.cuda.synchronize()
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        busy(cond == 'gemv')
        with torch.cuda.stream(mem):
            torch.cuda._sleep(int(50e6))  # ~25-35 ms at the H200's clock: the host issues meanwhile
            a.record(mem)
            t0 = time.perf_counter()
            issue(n, size, pattern, direction)
            host_us = (time.perf_counter() - t0) * 1e6
            b.record(mem)
        torch.cuda.synchronize()
        out.append((a.elapsed_time(b) * 1000 / n, host_us / n))
    out.sort()
    return out[len(out) // 2]


def graph(n, size, pattern, direction, cond, reps=5):
    g = torch.cuda.CUDAGraph()
    torch.cuda.synchronize()
    with torch.cuda.graph(g, stream=mem):
        issue(n, size, pattern, direction)
    torch.cuda.synchronize()
    g.replay()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        busy(cond == 'gemv')
        with torch.cuda.stream(mem):
            a.record(mem)
            g.replay()
            b.record(mem)
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b) * 1000 / n)
    out.sort()
    del g
    return out[len(out) // 2]


for direction in ['h2d', 'd2h']:
    for size in [9216, 17408, 33792, 65536]:
        for pattern in ['scattered', 'adjacent']:
            for cond in ['idle', 'gemv']:
                row = {'direction': direction, 'bytes': size, 'pattern': pattern, 'condition': cond}
                for n in [192, 900]:
                    try:
                        dev_us, host_us = gated(n, size, pattern, direction, cond)
                        row[f'gated_{n}_us'] = round(dev_us, 3)
                        row[f'gated_{n}_host_us'] = round(host_us, 3)
                    except Exception as e:
                        row[f'gated_{n}_error'] = str(e)[:200]
                for n in [192, 2000, 9728]:
                    try:
                        row[f'graph_{n}_us'] = round(graph(n, size, pattern, direction, cond), 3)
                    except Exception as e:
                        row[f'graph_{n}_error'] = str(e)[:200]
                print(json.dumps(row), flush=True)
