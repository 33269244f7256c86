"""storage-batch-us.sh's storage cells side by side: per cell the simulated mean step time's error against the
hardware's, as calibrated and with batch_us, and whether the cell passes; then the counts."""
import glob, json, os, statistics as st, sys

w = sys.argv[1]
n = passed = passed_b = within = within_b = 0
err, err_b = [], []
for d in sorted(glob.glob(f'{w}/new-*')):
    name = d[len(f'{w}/new-'):]
    a = f'{w}/asis-{name}/validate.json'
    if not (os.path.exists(a) and os.path.exists(f'{d}/validate.json')):
        continue
    A = {c['id']: c for c in json.load(open(a))['cells'] if c.get('status') == 'ok'}
    B = {c['id']: c for c in json.load(open(f'{d}/validate.json'))['cells'] if c.get('status') == 'ok'}
    for k, c in A.items():
        if c.get('pool') != 'storage':
            continue
        b = B[k]
        me = lambda x: (x['sim_dist']['mean'] - x['hw_dist']['mean']) / x['hw_dist']['mean']
        n += 1
        passed += c['judgement']['pass']; passed_b += b['judgement']['pass']
        within += abs(me(c)) <= 0.05; within_b += abs(me(b)) <= 0.05
        err.append(c['error']['median']); err_b.append(b['error']['median'])
        print(f"{name[:44]:44} {k.split('_', 1)[1][-44:]:44} mean {100 * me(c):+6.1f}% -> {100 * me(b):+6.1f}%  pass {c['judgement']['pass']!s:5} -> {b['judgement']['pass']}")
print(f'storage cells {n}: passing {passed} -> {passed_b}; run mean within 5% {within} -> {within_b}; median of the cells\' per-step median |error| {100 * st.median(err):.2f}% -> {100 * st.median(err_b):.2f}%')
