# convert-pace.jsonl as the README's table: per run, the host probe, the conversions of step 15, and per
# conversion the host's issue time and the step's time beyond the median of steps 1-14.
#   python3 lab/data/hil/diag-2026-11-28h/convert-pace/table.py
import json, os, statistics as st
here = os.path.dirname(os.path.abspath(__file__))
print('| budget | round | plan | host probe, us a copy | conversions in step 15 | issue time beyond steps 1-14, us per conversion | step time beyond steps 1-14, us per conversion |')
print('| --- | --- | --- | --- | --- | --- | --- |')
for line in open(os.path.join(here, 'convert-pace.jsonl')):
    r = json.loads(line)
    iss, lat, n = r['issue_us'], r['latency_us'], r['conversions'][15]
    print(f"| {r['budget']} | {r['round']} | {r['variant']} | {r['host_probe']['copy_us']:.2f} | {n} | {(iss[15] - st.median(iss[1:15])) / n:.2f} | {(lat[15] - st.median(lat[1:15])) / n:.2f} |")
