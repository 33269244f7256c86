"""Offline: the 49-step SmartKV run (rebucket48-run.sh) per step, the simulator against each HIL run, with the first
run's host gap, host issue time and memory-stream busy time, at the re-bucketing steps (15, 31, 47) and beside them.
  tar -C /tmp/rb48 -xzf lab/data/hil/diag-2026-11-28d/rebucket48-timelines-h200-f86b03a.tgz
  python3 lab/data/hil/diag-2026-11-28d/rebucket48-steps.py /tmp/rb48/c-t8k48-20pct
"""
import csv, sys

D = sys.argv[1] if len(sys.argv) > 1 else '/tmp/rb48/c-t8k48-20pct'
sim = [float(r['latency_ms']) for r in csv.DictReader(open(f'{D}/sim-smartkv/steps.csv'))]
h = [list(csv.DictReader(open(f'{D}/{d}/hil-steps.csv'))) for d in ('hil-smartkv', 'hil-smartkv-r2')]
print('step  sim ms  run 1 ms  run 2 ms  sim vs their mean  | run 1: host gap ms, host issue ms, memory stream busy ms')
for s in (1, 14, 15, 16, 30, 31, 32, 46, 47, 48):
    a, b = (float(x[s]['latency_us']) / 1000 for x in h)
    r = h[0][s]
    print(f"{s:4d} {sim[s]:7.2f} {a:9.2f} {b:9.2f} {100 * (sim[s] - (a + b) / 2) / ((a + b) / 2):+8.1f}%"
          f"  | {float(r['host_gap_us']) / 1000:6.2f} {float(r['host_issue_us']) / 1000:6.1f} {float(r['transfer_us']) / 1000:6.2f}")
