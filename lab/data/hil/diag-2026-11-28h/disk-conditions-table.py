# The table of README.md from disk-conditions.jsonl: per set and condition, one figure per pass: the median
# over steps 2-15 and over steps 0-1, and each batch kind's median time.
#   python3 lab/data/hil/diag-2026-11-28h/disk-conditions-table.py > lab/data/hil/diag-2026-11-28h/disk-conditions-table.txt
import json, os, statistics as st
here = os.path.dirname(os.path.abspath(__file__))
rows = [json.loads(l) for l in open(os.path.join(here, 'disk-conditions.jsonl'))]
by = {}
for r in rows:
    if r['kind'] != 'timeline':
        continue
    s = r['step_ms'][:16]
    b = r['batches']
    small = [x[3] * 1000 for x in b if x[1] < 32 and x[0] >= 2]
    per_req = [x[3] * 1000 / x[1] for x in b if x[1] >= 32]
    by.setdefault((r['set'], r['condition']), []).append((st.median(s[2:16]), st.median(s[0:2]), st.median(small) if small else float('nan'), st.median(per_req)))
print('| set | condition | passes | steps 2-15, ms (median per pass) | steps 0-1, ms | batch of 1-31 requests, us | layer batch, us per request |')
print('| --- | --- | --- | --- | --- | --- | --- |')
for (name, cond), xs in by.items():
    f = lambda i, d=1: ' / '.join(f'{x[i]:.{d}f}' for x in xs)
    print(f'| {name} | {cond} | {len(xs)} | {f(0, 0)} | {f(1, 0)} | {f(2, 0)} | {f(3)} |')
