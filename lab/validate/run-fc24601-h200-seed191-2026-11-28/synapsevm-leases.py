"""Offline: SynapseVM 40% on the Llama-3-8B 8k generated traces of every stored H200 run of the standing grid: the mean
step (steps 1-15) simulated and on the hardware, with the profile's H2D alpha and issue cost per copy.
  python3 lab/validate/run-fc24601-h200-seed191-2026-11-28/synapsevm-leases.py   (from the repo root)
"""
import glob, json, statistics
print('| run | H2D alpha us | issue per copy us | sim ms | hw ms | sim / hw |')
print('| --- | --- | --- | --- | --- | --- |')
for d in sorted(glob.glob('lab/validate/run-*h200*')):
    cs = glob.glob(d + '/cells/*broad-every-policy*llama-3-8b*synapsevm_40pct.json')
    if not cs:
        continue
    c = json.load(open(cs[0]))
    if not (c.get('sim_ms') and c.get('hw_ms')):
        continue
    p = json.load(open(d + '/profiles/llama-3-8b.json'))
    # the host link into HBM: the direction whose destination is the hbm tier
    alpha = next((l['a_to_b' if l['b'] == 'hbm' else 'b_to_a']['alpha_us'] for l in p['links'] if 'hbm' in (l['a'], l['b'])), None)
    sm = statistics.mean(c['sim_ms'][1:])
    hm = statistics.mean(statistics.mean(r[1:]) for r in c['hw_ms'])
    print(f"| {d.split('/')[-1]} | {alpha} | {p['gpu'].get('issue_copy_us')} | {sm:.2f} | {hm:.2f} | {100 * (sm / hm - 1):+.1f}% |")
