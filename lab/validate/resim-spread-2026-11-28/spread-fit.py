# spread_us per direction from perf/device/host-span.mjs: per GPU, condition (idle, beside compute) and
# direction, the least-squares slope of the time per copy against the doublings per copy the simulator
# counts (log2(distance / 3) summed over a layer's 25 ascending random slots of M, over the 25 copies),
# against M = 48; spread_us = the mean of the idle and beside slopes.
#   python3 spread-fit.py H100_FILE... -- H200_FILE...
import math, random, re, sys
random.seed(1)
def doublings(M, trials=4000):
    s = 0
    for _ in range(trials):
        xs = sorted(random.sample(range(M), 25))
        s += sum(math.log2((b - a) / 3) for a, b in zip(xs, xs[1:]) if b - a > 3) / 25
    return s / trials
Ds = {M: doublings(M) for M in (48, 512, 2048, 8192)}
def times(files):
    t = {}
    for f in files:
        for line in open(f):
            m = re.match(r'(beside|idle) (d2h|h2d) M=(\d+)( clustered)?\s+([\d.]+) us', line)
            if m and not m.group(4): t.setdefault((m.group(1), m.group(2), int(m.group(3))), []).append(float(m.group(5)))
    return {k: sum(v) / len(v) for k, v in t.items()}
args = sys.argv[1:]
cut = args.index('--')
for gpu, files in (('H100', args[:cut]), ('H200', args[cut + 1:])):
    t = times(files)
    for d in ('h2d', 'd2h'):
        ks = []
        for cond in ('idle', 'beside'):
            x = [Ds[M] - Ds[48] for M in (512, 2048, 8192)]
            y = [t[(cond, d, M)] - t[(cond, d, 48)] for M in (512, 2048, 8192)]
            ks.append(sum(a * b for a, b in zip(x, y)) / sum(a * a for a in x))
        print(f'{gpu} {d}: idle {ks[0]:.3f}, beside {ks[1]:.3f}, spread_us {sum(ks) / 2:.3f} us per doubling')
