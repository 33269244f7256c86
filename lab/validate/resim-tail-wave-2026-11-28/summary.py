# The per-grid table of README.md from resim-all.sh's output ($OUT, default /tmp/tw): run from the repo root
#   python3 lab/validate/resim-tail-wave-2026-11-28/summary.py A
import json, sys, glob, os, subprocess
OUT=os.environ.get('OUT','/tmp/tw')
def load(d):
    v=json.load(open(d+'/validate.json'))
    return {c['id']:c for c in v['cells'] if c['status']=='ok'}
def sgn(c): return 100*(c['sim_dist']['mean']/c['hw_dist']['mean']-1)
tag=sys.argv[1]
rows=[]
tot={'b':[0,0],'a':[0,0]}
print('| grid | GPU | us_per_chunk | SL 20% | H2O 20% | SL 40% | H2O 40% | full | moving nothing: pass, p95 | moving: pass |')
print('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
for b in sorted(glob.glob(OUT+'/base-run-*')):
    n=b[len(OUT+'/base-'):]
    a=OUT+'/%s-%s'%(tag,n)
    if not os.path.isdir(a): continue
    B=load(b); A=load(a)
    seed=n.split('seed')[1].split('-')[0]; gpu='H200' if 'h200' in n else 'H100'
    prof=json.load(open(OUT+'/in-%s-%s/profiles/llama-2-7b.json'%(tag,n)))
    l=prof['gpu'].get('attention_waves',{}).get('us_per_chunk','-')
    cells=[]
    for pol,bud in [('streaming-llm','20pct'),('h2o','20pct'),('streaming-llm','40pct'),('h2o','40pct'),('full','100pct')]:
        k=[x for x in B if 'llama-2-7b-8k' in x and x.endswith('_%s_%s'%(pol,bud)) and 'needle' in x]
        if not k: cells.append('-'); continue
        k=k[0]
        cells.append('%+.2f → %+.2f%s'%(sgn(B[k]),sgn(A[k]), '' if A[k]['judgement']['pass'] else ' ✗'))
    def pool(d):
        out=subprocess.run(['node','lab/validate/tools/pools.mjs',d],capture_output=True,text=True).stdout
        mn=[l for l in out.splitlines() if l.startswith('| generated, moving nothing')][0].split('|')
        mv=[l for l in out.splitlines() if l.startswith('| generated, moving, storage apart')][0].split('|')
        return mn[2].strip(), mn[3].strip().split('/')[1].strip(), mv[2].strip()
    pb=pool(b); pa=pool(a)
    print('| %s | %s | %s | %s | %s → %s, %s → %s | %s → %s |'%(seed,gpu,l,' | '.join(cells),pb[0],pa[0],pb[1],pa[1],pb[2],pa[2]))
