# Step 15 (the re-bucketing step) layer by layer, hardware against simulator: the conversion kernels of each
# layer (from the simulated spans) and the time from one layer's attention to the next, per kernel.
#   python3 lab/data/hil/diag-2026-11-28h/smartkv-hil-s197/layers.py        (reads the .json.gz here)
import gzip, json, os
here = os.path.dirname(os.path.abspath(__file__))
def spans(name):
    t = json.load(gzip.open(os.path.join(here, name)))
    ev = t['traceEvents'] if isinstance(t, dict) else t
    tids = {e['tid']: e['args']['name'] for e in ev if e.get('ph') == 'M' and e['name'] == 'thread_name'}
    return [(tids.get(e['tid']), e['name'], e['ts'], e['dur'], e.get('args', {})) for e in ev if e.get('ph') == 'X' and e.get('args', {}).get('step') == 15]
for b in ('40', '20'):
    H, S = spans(f'hil-trace-{b}.json.gz'), spans(f'sim-trace-{b}.json.gz')
    k = {}
    for x in S:
        if x[0] == 'memory' and x[1].startswith('requantize'):
            k[x[4]['layer']] = k.get(x[4]['layer'], 0) + x[4].get('kernels', 0)
    attn = lambda X: sorted(x[2] for x in X if x[0] == 'compute' and x[1] == 'attention')
    ha, sa = attn(H), attn(S)
    print(f'budget {b}%: {sum(k.values())} conversion kernels in step 15')
    print('  layer  kernels  hw ms  sim ms  hw us/kernel  sim us/kernel')
    for l in range(len(ha) - 1):
        n = k.get(l + 1, 0)
        hd, sd = (ha[l + 1] - ha[l]) / 1000, (sa[l + 1] - sa[l]) / 1000
        print(f'  {l + 1:5d}  {n:7d}  {hd:5.2f}  {sd:6.2f}  {hd * 1000 / n if n else 0:11.1f}  {sd * 1000 / n if n else 0:12.1f}')
