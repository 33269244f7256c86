"""Memory-stream batches of a HIL run against the simulator's (the k-th of a step against the k-th), grouped by
op kind, copies and bytes: the mean time of batches that ran beside no kernel (idle pace per copy), of those
beside GEMVs (and their overlap with the GEMVs), and the measured excess over the idle batches per us beside
GEMVs.
  python3 lab/experiments/batch-pace.py CELLDIR POLICY   (CELLDIR as op-sums.py takes it)
"""
import json,sys,statistics as st
from collections import defaultdict
def load(p):
    d=json.load(open(p)); ev=d['traceEvents']
    names={e['tid']:e['args']['name'] for e in ev if e.get('name')=='thread_name'}
    out=defaultdict(list)
    for e in ev:
        if e.get('ph')!='X' or 'step' not in e.get('args',{}): continue
        out[e['args']['step']].append(dict(stream=names.get(e['tid']),lab=e['name'].split(' ')[0],t0=e['ts'],t1=e['ts']+e['dur'],a=e['args']))
    return out
def ov(a,b,sp): return sum(max(0,min(b,s['t1'])-max(a,s['t0'])) for s in sp)
def rows(A,step):
    lst=A[step]; lin=[x for x in lst if x['stream']=='compute' and x['lab'] in('linear','lm-head')]
    att=[x for x in lst if x['stream']=='compute' and x['lab']=='attention']
    mem=sorted([x for x in lst if x['stream']=='memory'],key=lambda x:x['t0'])
    return [(m['lab'],m['t1']-m['t0'],ov(m['t0'],m['t1'],lin),ov(m['t0'],m['t1'],att),m['a'].get('runs'),m['a'].get('bytes')) for m in mem]
cell,pol=sys.argv[1],sys.argv[2]
H=load(f'{cell}/hil-{pol}/trace.json'); S=load(f'{cell}/sim-{pol}/trace.json')
g=defaultdict(lambda: defaultdict(list))
for step in sorted(H):
    if step==0: continue
    h=rows(H,step); s=rows(S,step)
    if len(h)!=len(s): continue
    for a,b in zip(h,s):
        if a[0]!=b[0]: continue
        key=(a[0],b[4],b[5])
        kind='idle' if a[2]==0 and a[3]==0 else ('gemv' if a[2]>0 else 'attn')
        g[key][kind].append((a[1],a[2],b[1],b[2]))
for key,d in g.items():
    lab,runs,by=key
    if not runs: continue  # kernels on the memory stream (requantize) carry no copies
    ih=st.mean(x[0] for x in d['idle']) if d['idle'] else None
    line=f"{pol:14s} {lab:9s} runs {runs} B/copy {by/runs if runs else 0:8.0f}"
    if ih: line+=f" | idle n={len(d['idle'])} hw {ih:7.1f} ({ih/runs:.3f}/copy) sim {st.mean(x[2] for x in d['idle']):7.1f}"
    if d['gemv']:
        gh=st.mean(x[0] for x in d['gemv']); gs=st.mean(x[2] for x in d['gemv']); ovh=st.mean(x[1] for x in d['gemv']); ovs=st.mean(x[3] for x in d['gemv'])
        line+=f" | gemv n={len(d['gemv'])} hw {gh:7.1f} ov {ovh:6.1f} sim {gs:7.1f} ov {ovs:6.1f}"
        if ih: line+=f" excess/ov hw {(gh-ih)/ovh:.2f}"
    if d['attn']: line+=f" | attn-only n={len(d['attn'])} hw {st.mean(x[0] for x in d['attn']):.1f} sim {st.mean(x[2] for x in d['attn']):.1f}"
    print(line)
