"""
A validate cell's step copies replayed on the device alone: the copies export-copies.mjs wrote (the HIL's
lowered plan: plan order, host offsets in the pinned host tier, HBM offsets, bytes) captured in a CUDA
graph on one stream and replayed, so the host issues none of them; idle, and beside a chain of
layer-sized GEMVs on a second stream that runs as long as the simulator's compute for that step (all of
it GEMV-like HBM traffic: the copies here overlap it more than the HIL's copies overlap its GEMVs).
The median of 5 replays, in ms, per (cell, step), beside the hardware's and the simulator's step.
   python3 copy-replay.py copies-seed191.json.gz [--idle-only]
"""
import gzip, json, sys
import torch

src = sys.argv[1]
# --idle-only: the idle replays alone (no GEMV chains)
idle_only = '--idle-only' in sys.argv
cells = json.load(gzip.open(src) if src.endswith('.gz') else open(src))
torch.cuda.init()
print(json.dumps({'device': torch.cuda.get_device_name(0), 'torch': torch.__version__, 'cuda': torch.version.cuda}), flush=True)
host_bytes = max(max(r['copies'][4 * i + 1] + r['copies'][4 * i + 3] for i in range(len(r['copies']) // 4)) for r in cells)
dev_bytes = max(max(r['copies'][4 * i + 2] + r['copies'][4 * i + 3] for i in range(len(r['copies']) // 4)) for r in cells)
host = torch.empty(host_bytes, dtype=torch.uint8, pin_memory=True)
hbm = torch.empty(dev_bytes, dtype=torch.uint8, device='cuda')
mem = torch.cuda.Stream()
comp = torch.cuda.Stream()
W = torch.randn(14336, 4096, dtype=torch.float16, device='cuda')
xv = torch.randn(4096, dtype=torch.float16, device='cuda')
yv = torch.empty(14336, dtype=torch.float16, device='cuda')
with torch.cuda.stream(comp):
    torch.mv(W, xv, out=yv)
torch.cuda.synchronize()


def timed(fn, stream, reps=5):
    """fn's work timed on `stream`, fn run with `stream` current (a graph replays on the current stream)"""
    out = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        with torch.cuda.stream(stream):
            a.record(stream)
            fn()
            b.record(stream)
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b))
    out.sort()
    return out[len(out) // 2]


# one GEMV's time, to size the chains
g1 = torch.cuda.CUDAGraph()
with torch.cuda.graph(g1, stream=comp):
    for _ in range(100):
        torch.mv(W, xv, out=yv)
gemv_ms = timed(lambda: g1.replay(), comp) / 100
print(json.dumps({'gemv_ms': round(gemv_ms, 5)}), flush=True)
chains = {}


def gemv_chain(ms):
    n = max(1, round(ms / gemv_ms))
    if n not in chains:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=comp):
            for _ in range(n):
                torch.mv(W, xv, out=yv)
        chains[n] = g
    return chains[n], n


for r in cells:
    c = r['copies']
    n = len(c) // 4
    g = torch.cuda.CUDAGraph()
    torch.cuda.synchronize()
    with torch.cuda.graph(g, stream=mem):
        for i in range(n):
            d, ho, do, nb = c[4 * i:4 * i + 4]
            h = host[ho:ho + nb]
            x = hbm[do:do + nb]
            if d == 0:
                x.copy_(h, non_blocking=True)
            else:
                h.copy_(x, non_blocking=True)
    g.replay()
    torch.cuda.synchronize()
    idle = timed(lambda: g.replay(), mem)
    beside, k = None, 0
    if not idle_only:
        chain, k = gemv_chain(r['sim_compute_ms'])

        def both():
            with torch.cuda.stream(comp):
                chain.replay()
            with torch.cuda.stream(mem):
                g.replay()
        beside = timed(both, mem)
    del g
    print(json.dumps({'id': r['id'], 'step': r['step'], 'copies': n, 'h2d': sum(1 for i in range(n) if c[4 * i] == 0), 'bytes': sum(c[4 * i + 3] for i in range(n)),
                      'device_idle_ms': round(idle, 3), 'device_beside_gemv_ms': None if beside is None else round(beside, 3), 'gemvs': k,
                      'hw_ms': [round(x, 3) for x in r['hw_ms']], 'issue_ms': [round(x, 3) for x in (r['issue_ms'] or [])],
                      'sim_ms': round(r['sim_ms'], 3), 'sim_compute_ms': round(r['sim_compute_ms'], 3), 'sim_transfer_ms': round(r['sim_transfer_ms'], 3)}), flush=True)
