"""The pools of pooled-loo.sh's runs side by side: per grid and per policy, generated traces, cells that
move data to or from HBM (storage apart), as calibrated against with pooled copy terms."""
import json, statistics as st, sys

work, runs = sys.argv[1], sys.argv[2:]


def cells(d):
    v = json.load(open(f'{d}/validate.json'))
    return {c['id']: c for c in v['cells'] if c.get('status') == 'ok' and c.get('trace_kind') == 'generated' and c.get('pool') == 'moving'}


print('| grid | cells | passing, as calibrated | passing, copy terms pooled | median of cell medians | median of cell p95s |')
print('| --- | --- | --- | --- | --- | --- |')
tot = [0, 0, 0]
pol = {}
flips = [0, 0]
for r in runs:
    a, b = cells(f'{work}/asis/{r}'), cells(f'{work}/pooled/{r}')
    pa = sum(1 for c in a.values() if c['judgement']['pass'])
    pb = sum(1 for k in a if k in b and b[k]['judgement']['pass'])
    med = lambda x: st.median(c['error']['median'] for c in x.values())
    p95 = lambda x: st.median(c['error']['p95'] for c in x.values())
    print(f"| {r} | {len(a)} | {pa} | {pb} | {100 * med(a):.2f} -> {100 * med(b):.2f}% | {100 * p95(a):.2f} -> {100 * p95(b):.2f}% |")
    tot[0] += len(a); tot[1] += pa; tot[2] += pb
    for k, c in a.items():
        q = pol.setdefault(c['policy'], [0, 0, 0])
        after = k in b and b[k]['judgement']['pass']
        q[0] += 1; q[1] += c['judgement']['pass']; q[2] += after
        flips[0] += after and not c['judgement']['pass']
        flips[1] += c['judgement']['pass'] and not after
print(f'| all | {tot[0]} | {tot[1]} | {tot[2]} | | |')
print()
print(f'cells that pass only pooled: {flips[0]}; only as calibrated: {flips[1]}')
print()
print('| policy | cells | passing, as calibrated | passing, copy terms pooled |')
print('| --- | --- | --- | --- |')
for p, (n, x, y) in sorted(pol.items()):
    print(f'| {p} | {n} | {x} | {y} |')
