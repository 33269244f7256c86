"""Markdown tables of the seed-system sweeps (lab/data/seeds): one table per trace, rows per policy and budget.
   python3 lab/seeds-table.py RESULTS.csv [RESULTS.csv ...] > table.md"""
import csv, json, os, sys

def label(r, base):
    p = r['policy']
    if p == 'synapsevm':
        cfg = json.load(open(os.path.join(base, r['run_dir'], 'config.json')))
        mode = (cfg.get('policy_options') or cfg.get('resolved', {}).get('policy_options') or {}).get('mode', 'lossless')
        return f'synapsevm ({mode})'
    return p

def gb(x):
    return f"{float(x) / 1e9:.2f}"

for path in sys.argv[1:]:
    base = os.path.dirname(path)
    rows = [r for r in csv.DictReader(open(path)) if r['status'] == 'ok']
    for r in rows:
        r['label'] = label(r, base)
    for trace in dict.fromkeys(r['trace'] for r in rows):
        sub = [r for r in rows if r['trace'] == trace]
        print(f"**{trace}** ({sub[0]['model']}, {sub[0]['hardware']})\n")
        print('| policy | budget | TBT p50 ms | recall mean | quant error mean | GB moved | masking |')
        print('| --- | --- | --- | --- | --- | --- | --- |')
        order = ['full', 'h2o', 'oracle', 'synapsevm (lossless)', 'synapsevm (predictive)', 'dpnc', 'ntransformer', 'smartkv']
        sub.sort(key=lambda r: (order.index(r['label']) if r['label'] in order else 99, float(r['hbm_budget_fraction'])))
        for r in sub:
            print(f"| {r['label']} | {float(r['hbm_budget_fraction']) * 100:.0f}% | {float(r['tbt_p50_ms']):.2f} | {float(r['recall_mean']):.3f} | "
                  f"{float(r['quant_error_mean']):.3f} | {gb(r['bytes_total'])} | {float(r['masking_efficiency']) * 100:.1f}% |")
        print()
