"""Offline (no GPU): the host's issue time of SmartKV's re-bucketing step (the last compared step, where a new block
completes) against the conversion kernels the simulator plans for it. For each SmartKV cell of this run, the
simulator replays the cell's trace with the run's profile (kvtier run, Chrome trace of every step) and counts the
conversion kernels of the last step; the hardware's host issue time of that step less the median of steps 1-14 is
put over them (host conversions, if any, are inside that time too).
  python3 lab/validate/run-f86b03a-h200-seed181-2026-11-28/rebucket-issue.py   (from the repo root, after npm run build and
  node bin/kvtier.js hil validate-resim RUN --out /tmp/resim181-disk --force, which writes the traces)
"""
import json,glob,subprocess,csv,collections,sys
R='lab/validate/run-f86b03a-h200-seed181-2026-11-28'
TR='/tmp/resim181-disk/traces'
rows=[]
for pat,trace,model in [('broad-every-policy-llama-3-8b-8k-s181','broad-every-policy-llama-3-8b-8k-s181.kvt','llama-3-8b'),('broad-llama-3-8b-32k-s181','broad-llama-3-8b-32k-s181.kvt','llama-3-8b'),('needle-llama-2-7b-8k-s181','needle-llama-2-7b-8k-s181.kvt','llama-2-7b')]:
  for b in ('10','20','40'):
    c=json.load(open(glob.glob(f'{R}/cells/*_{pat}_smartkv_{b}pct.json')[0]))
    out=f'/tmp/conv-{pat}-{b}'
    subprocess.run(['node','bin/kvtier.js','run','--trace',f'{TR}/{trace}','--policy','smartkv','--hardware',f'{R}/profiles/{model}.json','--hbm-budget',b+'%','--out',out,'--force','--trace-steps','17'],check=True,stdout=subprocess.DEVNULL)
    t=json.load(open(out+'/trace.json')); ev=t['traceEvents'] if isinstance(t,dict) else t
    k=collections.Counter()
    for e in ev:
      if e.get('ph')=='X' and e.get('cat')=='quantize': k[e['args']['step']]+=e['args']['kernels']
    iss=[sum(r[i] for r in c['hw_host_issue_ms'])/len(c['hw_host_issue_ms']) for i in range(16)]
    base=sorted(iss[1:15])[7]
    rows.append((pat[:28]+' '+b, k[15], iss[15], base))
    print(pat[:30], b, 'conv kernels last step', k[15], 'other steps', sum(k[s] for s in range(1,15)), 'hw issue last %.1f ms, typical %.1f ms'%(iss[15],base), 'per conv %.1f us'%((iss[15]-base)*1000/max(1,k[15])), flush=True)
p=json.load(open(f'{R}/profiles/llama-3-8b.json'))['gpu']; print('calibrated issue_convert_us', p['issue_convert_us'])
