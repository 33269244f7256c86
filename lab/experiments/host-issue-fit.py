#!/usr/bin/env python3
# Offline (no GPU): the host's per-op issue costs by kind, solved by least squares from stored
# validate runs, against each lease's calibrated costs (profiles/<model>.json gpu.issue_*_us).
# Input: the JSON lines of host-issue-ops.mjs (one file per run).
#   python3 lab/experiments/host-issue-fit.py /tmp/ho-RUN1.jsonl /tmp/ho-RUN2.jsonl ...
# Fit A (the issue time of steps where the host ran free): steps >= 1 with no host conversion or file
# op, whose hardware issue time is under 0.8 x the step (the host ahead of the GPU, not held back) or
# whose compute stream waited on the host for over half the step (host-bound); y = hw_host_issue_ms,
# x = the step's lowered ops by kind; per hardware run, one sample each. Kinds: copy (all copies),
# rec (marks, records, waits), kernel (GEMVs, rotations), attn; conversions appear only in
# re-bucketing steps, which are never free-running (fit B).
# Fit B (SmartKV's re-bucketing steps, no host conversion): the step's hardware time against the ops
# the host issued after the step's q-th memory-stream op (q = gpu.launch_queue_ops), with the other
# kinds at fit A's costs: the conversion launch's cost if the host could queue only q memory-stream
# ops behind the step's barrier; and the same with every op of the step less the simulator's lead
# (what the simulator's host clock assumes).
import json, sys, os
import numpy as np

KINDS = ['copy', 'rec', 'kernel', 'attn']
def group(c):
    g = {'copy': 0, 'rec': 0, 'kernel': 0, 'attn': 0, 'convert': 0, 'other': 0}
    for k, v in c.items():
        if k.startswith('copy'): g['copy'] += v
        elif k in ('mark', 'record', 'wait'): g['rec'] += v
        elif k in ('gemv', 'rotate'): g['kernel'] += v
        elif k == 'attn': g['attn'] += v
        elif k in ('quant', 'dequant'): g['convert'] += v
        else: g['other'] += v
    return g

def calibrated(run, model):
    for base in ('lab/validate', '.'):
        p = os.path.join(base, run, 'profiles', f'{model}.json')
        if os.path.exists(p):
            g = json.load(open(p))['gpu']
            return {'copy': g.get('issue_copy_us'), 'rec': g.get('issue_record_us'), 'kernel': g.get('issue_kernel_us'), 'attn': g.get('issue_attention_us'), 'convert': g.get('issue_convert_us')}
    return None

for f in sys.argv[1:]:
    rows = [json.loads(l) for l in open(f)]
    if not rows: continue
    run = rows[0]['run']
    print(f'\n== {run}')
    for model in sorted({r['model'] for r in rows}):
        cal = calibrated(run, model)
        X, y, tags = [], [], []
        for r in rows:
            if r['model'] != model or r['step'] < 1: continue
            g = group(r['counts'])
            if g['other'] or g['convert']: continue
            for k in range(len(r['hw_ms'])):
                hw, iss, gap = r['hw_ms'][k], r['hw_issue_ms'][k], (r['hw_gap_ms'] or [0, 0])[k]
                if iss < 0.8 * hw or gap > 0.5 * hw:
                    X.append([g[x] for x in KINDS]); y.append(iss * 1e3); tags.append((r['policy'], r['budget'], r['context'], 'bound' if gap > 0.5 * hw else 'ahead'))
        if len(y) < 8:
            print(f'  {model}: {len(y)} free-running steps, too few'); continue
        X = np.array(X, float); y = np.array(y)
        # kinds that never vary independently cannot be solved: drop columns with no spread
        sol, *_ = np.linalg.lstsq(X, y, rcond=None)
        pred = X @ sol
        res = (y - pred) / y
        fit = dict(zip(KINDS, sol))
        pols = sorted({t[0] for t in tags})
        print(f'  {model}: fit A on {len(y)} step-runs ({sum(t[3]=="bound" for t in tags)} host-bound, {sum(t[3]=="ahead" for t in tags)} host ahead; policies {",".join(pols)}); residual |rel| median {np.median(abs(res))*100:.1f}% p95 {np.percentile(abs(res),95)*100:.1f}%')
        print('    kind      solved   calibrated')
        for k in KINDS:
            print(f'    {k:8s} {fit[k]:8.2f}   {cal[k] if cal else None}')
        # the same with the calibrated costs: the calibrated prediction's error on these steps
        if cal and all(cal[k] is not None for k in KINDS):
            cp = X @ np.array([cal[k] for k in KINDS])
            print(f'    calibrated costs on these steps: issue predicted / measured median {np.median(cp / y):.3f} (host-bound {np.median((cp/y)[[t[3]=="bound" for t in tags]]) if any(t[3]=="bound" for t in tags) else float("nan"):.3f}, ahead {np.median((cp/y)[[t[3]=="ahead" for t in tags]]) if any(t[3]=="ahead" for t in tags) else float("nan"):.3f})')
        # fit B: SmartKV's re-bucketing steps
        for r in rows:
            if r['model'] != model: continue
            g = group(r['counts'])
            if g['convert'] < 200 or g['other']: continue
            a = group(r.get('after_q', {}))
            for k in range(len(r['hw_ms'])):
                hw = r['hw_ms'][k] * 1e3
                rest_q = sum(a[x] * fit[x] for x in KINDS)
                cq = (hw - rest_q) / a['convert'] if a['convert'] else float('nan')
                rest_all = sum(g[x] * fit[x] for x in KINDS)
                # the simulator's view: latency = every op's issue - its lead at the step's start
                call = (hw + r['sim_host_lead_ms'] * 1e3 - rest_all) / g['convert']
                ci = (r['hw_issue_ms'][k] * 1e3 - rest_all) / g['convert']
                print(f'    B {r["policy"]} {r["context"]//1024}k {r["budget"]:>4s} step {r["step"]} run {k}: conv {g["convert"]}, after q {a["convert"]}; hw {hw/1e3:.1f} ms issue {r["hw_issue_ms"][k]:.1f} sim {r["sim_ms"]:.1f}; us per conversion: queue-bound {cq:.2f}, sim-lead {call:.2f}, from the whole issue time {ci:.2f} (calibrated {cal["convert"] if cal else None})')
