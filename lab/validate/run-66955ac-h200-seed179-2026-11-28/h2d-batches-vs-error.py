"""Offline: over the stored grids of one GPU kind, each Llama-3-8B calibration's idle H2D layout batches
(the batches the profile's H2D alpha and beta are fitted to, stored in profiles/llama-3-8b.fit.json) against
the median over those grids of the same batch, with the fitted H2D alpha and the grid's Llama-3-8B
data-moving 8k cells (LRU offload, ARC, uniform INT8, FlexGen; 10/20/40%) as simulated over measured mean
step time, as run (each grid at its own commit).
  python3 lab/validate/run-66955ac-h200-seed179-2026-11-28/h2d-batches-vs-error.py [h200|h100]
"""
import csv, glob, json, os, statistics, sys

kind = sys.argv[1] if len(sys.argv) > 1 else 'h200'
rows = []
for d in sorted(glob.glob(f'lab/validate/run-*-{kind}-*')):
    f = d + '/profiles/llama-3-8b.fit.json'
    if not (os.path.exists(f) and os.path.exists(d + '/cells.csv')):
        continue
    m = json.load(open(f))['measurements']
    batches = {p['label']: p['us'] for p in m.get('h2d_layout_idle', [])}
    p = json.load(open(d + '/profiles/llama-3-8b.json'))['links'][0]['b_to_a']
    err = {}
    for r in csv.DictReader(open(d + '/cells.csv')):
        if r['model'] == 'llama-3-8b' and r['status'] == 'ok' and r['sim_mean_ms'] and 'nvme' not in r['id'] and int(r['prompt_tokens'] or 0) < 10000 and r['policy'] in ('lru-offload', 'arc', 'uniform-int8', 'flexgen-static'):
            err.setdefault(r['policy'], []).append(float(r['sim_mean_ms']) / float(r['hw_mean_ms']) - 1)
    if batches and err:
        rows.append((os.path.basename(d), batches, p['alpha_us'], err))
labels = [l for l in rows[0][1] if all(l in r[1] for r in rows)]
med = {l: statistics.median(r[1][l] for r in rows) for l in labels}
# (a grid whose batches are stored at another scale, under half the median on every label, is left out and named)
other = [r[0] for r in rows if all(r[1][l] < med[l] / 2 for l in labels)]
rows = [r for r in rows if r[0] not in other]
med = {l: statistics.median(r[1][l] for r in rows) for l in labels}
print(f'{len(rows)} {kind.upper()} grids; idle H2D batches: {len(labels)} common labels' + (f'; left out (batches stored at another scale): {", ".join(other)}' if other else ''))
print('| grid | idle H2D batches vs the median grid: median (min..max) | H2D alpha, us | LRU offload | ARC | uniform INT8 | FlexGen |')
print('| --- | --- | --- | --- | --- | --- | --- |')
mean = lambda xs: f'{sum(xs) / len(xs) * 100:+.1f}%' if xs else '-'
for name, b, alpha, err in sorted(rows, key=lambda r: statistics.median(r[1][l] / med[l] for l in labels)):
    q = [b[l] / med[l] - 1 for l in labels]
    print(f"| {name} | {statistics.median(q) * 100:+.1f}% ({min(q) * 100:+.1f}..{max(q) * 100:+.1f}%) | {alpha} | {mean(err.get('lru-offload', []))} | {mean(err.get('arc', []))} | {mean(err.get('uniform-int8', []))} | {mean(err.get('flexgen-static', []))} |")
