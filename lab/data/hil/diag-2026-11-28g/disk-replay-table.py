"""The tables of README.md from disk-replay.jsonl, the replayed batches and the seed-193 run's cells: per set the
per-step read time of the disk alone (each round's median over steps 1-15, step 0 left out, then the median
over the rounds), and for SynapseVM 10% per step the batches, the disk alone and the HIL run's reads and joins.
  python3 lab/data/hil/diag-2026-11-28g/disk-replay-table.py"""
import collections, gzip, json, os, statistics as st

here = os.path.dirname(os.path.abspath(__file__))
rows = [json.loads(l) for l in open(f'{here}/disk-replay.jsonl') if '"timeline"' in l]
sets = collections.defaultdict(list)
for r in rows:
    sets[r['set']].append(r)
print('| set | rounds | requests per step | ms per step | us per request |')
print('| --- | --- | --- | --- | --- |')
for k, rs in sets.items():
    meds = [st.median(r['step_ms'][1:16]) for r in rs]
    req = rs[0]['requests'] / 16
    print(f'| {k} | {len(rs)} | {req:,.0f} | {st.median(meds):.1f} | {st.median(meds) * 1000 / req:.1f} |')

# SynapseVM 10% per step: its batches (and how many requests the extra ones hold), the disk alone, the run
per = collections.defaultdict(list)
with gzip.open(f'{here}/reads-synapsevm-10pct.txt.gz', 'rt') as f:
    f.readline()
    for line in f:
        p = line.split()
        if p[0] == 'B':
            per[int(p[1])].append(int(p[2]))
cell = json.load(open(f'{here}/../../../validate/run-1d23569-h200-seed193-pooled-2026-11-28/cells/0016_broad-every-policy-llama-3-8b-8k-s193_synapsevm_10pct.json'))
disk = [r['step_ms'] for r in sets['synapsevm-10pct']]
hw = cell['hw_file']
print()
print('| step | batches | of them under 32 requests (their requests) | disk alone, ms (median of rounds) | HIL reads, ms | HIL joins, ms | HIL step, ms | simulated step, ms |')
print('| --- | --- | --- | --- | --- | --- | --- | --- |')
for s in range(16):
    small = [n for n in per[s] if n < 32]
    print(f"| {s} | {len(per[s])} | {len(small)} ({min(small, default=0)}-{max(small, default=0)}) | {st.median(d[s] for d in disk):.0f} | {st.median(r[s] for r in hw['read_ms']):.0f} | {st.median(r[s] for r in hw['join_ms']):.0f} | {cell['hw_median_ms'][s]:.0f} | {cell['sim_ms'][s]:.0f} |")
