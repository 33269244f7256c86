# The storage cells of storage-disk-probe.sh's re-simulations: passing, the mean within 5%, the median
# |error of the mean|, as calibrated and with the disk as probed, over all runs and per policy and trace kind.
import csv, glob, os, statistics as st, sys
W = sys.argv[1]
rows = []
for d in sorted(glob.glob(os.path.join(W, 'disk-run-*'))):
    n = os.path.basename(d)[len('disk-'):]
    a = os.path.join(W, 'asis-' + n)
    if not (os.path.exists(os.path.join(d, 'cells.csv')) and os.path.exists(os.path.join(a, 'cells.csv'))):
        continue
    A = {r['id']: r for r in csv.DictReader(open(os.path.join(a, 'cells.csv')))}
    for r in csv.DictReader(open(os.path.join(d, 'cells.csv'))):
        if r['pool'] != 'storage' or r['status'] != 'ok':
            continue
        x = A[r['id']]
        me = lambda q: float(q['sim_mean_ms']) / float(q['hw_mean_ms']) - 1
        rows.append({'run': n, 'policy': r['policy'], 'kind': r['trace_kind'], 'asis': me(x), 'disk': me(r), 'asis_pass': x['pass'] == 'pass', 'disk_pass': r['pass'] == 'pass'})
runs = len(set(r['run'] for r in rows))
print(f'{len(rows)} storage cells in {runs} runs\n')
print('| cells | n | passing, as calibrated | passing, disk as probed | mean within 5%, as calibrated / probed | median \\|error of the mean\\|, as calibrated / probed |')
print('| --- | --- | --- | --- | --- | --- |')
groups = [('all', rows)] + [(f'{p}, {k}', [r for r in rows if (r['policy'], r['kind']) == (p, k)]) for p, k in sorted(set((r['policy'], r['kind']) for r in rows))]
for name, rs in groups:
    w5 = lambda key: sum(abs(r[key]) <= 0.05 for r in rs)
    med = lambda key: st.median(abs(r[key]) for r in rs) * 100
    print(f"| {name} | {len(rs)} | {sum(r['asis_pass'] for r in rs)} | {sum(r['disk_pass'] for r in rs)} | {w5('asis')} / {w5('disk')} | {med('asis'):.1f} / {med('disk'):.1f}% |")
