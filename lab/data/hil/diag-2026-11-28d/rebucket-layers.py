"""Offline: SmartKV's re-bucketing step (step 15, the 8k broad trace of seed 181, 20%) on the H200 against the
simulator, per layer: the memory stream's "requantize 8->2b" span of each layer (its conversion kernels, from
the simulator's own trace), its time per kernel and the share of it the compute stream was busy.
  tar -C /tmp/rb -xzf lab/data/hil/diag-2026-11-28d/rebucket-timelines-h200-f86b03a.tgz
  python3 lab/data/hil/diag-2026-11-28d/rebucket-layers.py /tmp/rb/c-t8k-20pct
"""
import json, sys

D = sys.argv[1] if len(sys.argv) > 1 else '/tmp/rb/c-t8k-20pct'


def load(p):
    t = json.load(open(p))
    return t['traceEvents'] if isinstance(t, dict) else t


def of_step(ev, pred):
    return [e for e in ev if e.get('ph') == 'X' and (e.get('args') or {}).get('step') == 15 and pred(e)]


h = load(f'{D}/hil-smartkv/trace.json')
s = load(f'{D}/sim-smartkv/trace.json')
hq, sq = of_step(h, lambda e: e['name'] == 'requantize 8->2b'), of_step(s, lambda e: e['name'] == 'requantize 8->2b')
hc, sc = of_step(h, lambda e: e.get('cat') == 'kernel'), of_step(s, lambda e: e.get('cat') == 'kernel')
t0h = min(e['ts'] for e in of_step(h, lambda e: True))
t0s = min(e['ts'] for e in of_step(s, lambda e: True))


def busy(cs, a, b):
    return sum(max(0, min(b, e['ts'] + e['dur']) - max(a, e['ts'])) for e in cs)


print('layer kernels | hardware: us, us per kernel, start, compute busy | simulator: the same')
for i, (x, y) in enumerate(zip(hq, sq)):
    k = y['args']['kernels']
    print(f"{i:2d} {k:3d} | {x['dur']:6.0f} {x['dur'] / k:6.2f} {x['ts'] - t0h:7.0f} {100 * busy(hc, x['ts'], x['ts'] + x['dur']) / x['dur']:4.0f}% "
          f"| {y['dur']:6.0f} {y['dur'] / k:6.2f} {y['ts'] - t0s:7.0f} {100 * busy(sc, y['ts'], y['ts'] + y['dur']) / max(1e-9, y['dur']):4.0f}%")
tot_h = sum(e['dur'] for e in hq)
tot_s = sum(e['dur'] for e in sq)
k = sum(e['args']['kernels'] for e in sq)
print(f'all layers: {k} kernels, hardware {tot_h:.0f} us ({tot_h / k:.2f} per kernel), simulator {tot_s:.0f} us ({tot_s / k:.2f})')
