# disk-gaps.jsonl as the README's table: per idle time before each batch and pass, SynapseVM's small
# batches (fewer than 32 requests) in steps 2-15, their median time, and the median of steps 2-15.
#   python3 lab/data/hil/diag-2026-11-28h/disk-gaps/table.py
import json, os, statistics as st
here = os.path.dirname(os.path.abspath(__file__))
rows = [json.loads(l) for l in open(os.path.join(here, 'disk-gaps.jsonl')) if '"timeline"' in l]
print('| idle before each batch, us | pass | small batches | their median, us | layer batches, us per request | steps 2-15, ms (median) |')
print('| --- | --- | --- | --- | --- | --- |')
for r in sorted(rows, key=lambda r: (r['gap_us'], r['pass'])):
    small = [x[3] * 1000 for x in r['batches'] if x[1] < 32 and x[0] >= 2]
    layer = [x[3] * 1000 / x[1] for x in r['batches'] if x[1] >= 32]
    print(f"| {r['gap_us']} | {r['pass']} | {len(small)} | {st.median(small):.0f} | {st.median(layer):.1f} | {st.median(r['step_ms'][2:16]):.0f} |")
