"""
Here: the replayed copy lists priced with a profile's link terms, against the device-alone replays (the
table in README.md), and the least-squares fit of those terms to lease B's replays.
   python3 lab/data/hil/diag-2026-11-28f/price-lists.py   (from the repository root)
"""
import gzip, json, math, statistics as st
import numpy as np

D = 'lab/data/hil/diag-2026-11-28f/'
cells = json.load(gzip.open(D + 'copies-seed191.json.gz'))
rows = lambda f: [json.loads(l) for l in open(f) if l.startswith('{"id')]
A = {(r['id'], r['step']): r for r in rows(D + 'copy-replay-idle-h200.txt')}
B = {(r['id'], r['step']): r['device_idle_ms'] for r in rows(D + 'same-lease/copy-replay-idle-same-lease.txt')}


def price(c, p):
    """ms: each copy at alpha + bytes / GBps, switch_us at a change of direction, adjacent_us off an H2D copy
    whose slot follows the previous one, spread_us per doubling of the slot gap beyond 3 (64 KiB slots)"""
    h, d = p['links'][0]['b_to_a'], p['links'][0]['a_to_b']
    t, prev, prevoff = 0.0, None, None
    for i in range(len(c) // 4):
        dd, ho, _, nb = c[4 * i:4 * i + 4]
        L = h if dd == 0 else d
        t += L['alpha_us'] + nb / L['GBps'] / 1e3
        if prev is not None and dd != prev:
            t += h['switch_us']
        if prev == dd and prevoff is not None:
            gap = abs(ho - prevoff) // 65536
            if gap == 1 and dd == 0:
                t -= h.get('adjacent_us', 0)
            if gap > 3:
                t += math.log2(gap / 3) * L.get('spread_us', 0)
        prev, prevoff = dd, ho
    return t / 1000


p191 = json.load(open('lab/validate/run-fc24601-h200-seed191-2026-11-28/profiles/llama-3-8b.json'))
pB = json.load(open(D + 'same-lease/cal-1.json'))
by = {}
for r in cells:
    a = A[(r['id'], r['step'])]
    by.setdefault(r['id'], []).append((len(r['copies']) // 4, a['device_idle_ms'], B[(r['id'], r['step'])], price(r['copies'], p191), price(r['copies'], pB), st.mean(a['hw_ms']), a['sim_ms']))
rel = lambda x, y: 100 * (x - y) / y
print("| cell (Llama-3-8B) | copies a step | device alone, lease A / B (ms) | hardware step (ms) | simulated (ms) | priced by the seed-191 profile, against A | priced by lease B's calibration, against B |")
print('| --- | --- | --- | --- | --- | --- | --- |')
for k, v in by.items():
    m = lambda j: st.median(x[j] for x in v)
    name = k.split('_', 1)[1].replace('broad-every-policy-llama-3-8b-', '').replace('broad-llama-3-8b-', '').replace('-s191', '').replace('pct', '%').replace('_', ' ')
    print(f"| {name} | {m(0):.0f} | {m(1):.2f} / {m(2):.2f} | {m(5):.2f} | {m(6):.2f} | {st.median(rel(x[3], x[1]) for x in v):+.1f}% | {st.median(rel(x[4], x[2]) for x in v):+.1f}% |")

# the link terms fitted to lease B's replays (bytes at lease B's calibrated GBps)
h, d = pB['links'][0]['b_to_a'], pB['links'][0]['a_to_b']
X, x0, y, names = [], [], [], []
for r in cells:
    c = r['copies']
    f = [0, 0, 0, 0, 0.0]  # H2D copies, D2H copies, switches, adjacent H2D copies, spread doublings
    xfer, prev, prevoff = 0.0, None, None
    for i in range(len(c) // 4):
        dd, ho, _, nb = c[4 * i:4 * i + 4]
        f[0 if dd == 0 else 1] += 1
        xfer += nb / (h if dd == 0 else d)['GBps'] / 1e3
        if prev is not None and dd != prev:
            f[2] += 1
        if prev == dd and prevoff is not None:
            gap = abs(ho - prevoff) // 65536
            if gap == 1 and dd == 0:
                f[3] += 1
            if gap > 3:
                f[4] += math.log2(gap / 3)
        prev, prevoff = dd, ho
    X.append(f), x0.append(xfer), y.append(B[(r['id'], r['step'])] * 1000), names.append(f"{r['id'].split('_', 1)[1][:44]} step {r['step']}")
X, x0, y = np.array(X), np.array(x0), np.array(y)
c, *_ = np.linalg.lstsq(X, y - x0, rcond=None)
res = (X @ c + x0 - y) / y * 100
print('\nfit to lease B: alpha H2D %.3f, D2H %.3f us; switch %.3f; adjacent %.3f; per doubling %.4f us' % tuple(c))
print('residuals: median |%%| %.2f, max %.2f' % (np.median(np.abs(res)), np.max(np.abs(res))))
for n, e in sorted(zip(names, res), key=lambda t: t[1])[:8]:
    print(f'  {n}: {e:+.1f}%')
