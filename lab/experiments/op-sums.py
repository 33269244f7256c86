"""Per step (first left out), the median time per stream and op kind of a HIL run and of the simulator's run of
the same plan, and the compute stream's idle time between its kernels.
  python3 lab/experiments/op-sums.py CELLDIR...   (CELLDIR: c-NAME of an unpacked copy-overlap timelines.tgz,
                                                  holding hil-POLICY/trace.json and sim-POLICY/trace.json)
"""
import json,sys,glob,statistics as st
from collections import defaultdict
def load(p):
    d=json.load(open(p)); ev=d['traceEvents']
    names={e['tid']:e['args']['name'] for e in ev if e.get('name')=='thread_name'}
    steps=defaultdict(list)
    for e in ev:
        if e.get('ph')!='X' or 'step' not in e.get('args',{}): continue
        steps[e['args']['step']].append((names.get(e['tid']),e['name'].split(' ')[0],e['ts'],e['ts']+e['dur'],e['args'].get('layer')))
    return steps
for cell in sys.argv[1:]:
    for pol in sorted(glob.glob(cell+'/hil-*')):
        p=pol.split('hil-')[-1]
        H=load(pol+'/trace.json'); S=load(cell+'/sim-'+p+'/trace.json')
        agg=defaultdict(lambda:[[],[]])
        span=[[],[]]
        for k,(A) in enumerate((H,S)):
            for s,lst in A.items():
                if s==0: continue
                t0=min(x[2] for x in lst); t1=max(x[3] for x in lst)
                span[k].append(t1-t0)
                sums=defaultdict(float)
                for (stream,lab,a,b,l) in lst: sums[(stream,lab)]+=b-a
                # compute idle: gaps on compute stream
                comp=sorted([x for x in lst if x[0]=='compute'],key=lambda x:x[2])
                idle=sum(max(0,comp[i+1][2]-comp[i][3]) for i in range(len(comp)-1))
                sums[('compute','IDLE')]+=idle
                for key,v in sums.items(): agg[key][k].append(v)
        print(f"== {cell.split('/')[-1]} {p}: step span hw {st.median(span[0])/1000:.3f} sim {st.median(span[1])/1000:.3f} ms")
        for key in sorted(agg):
            h,s=agg[key]
            hm=st.median(h)/1000 if h else 0; sm=st.median(s)/1000 if s else 0
            print(f"   {key[0]:8s} {key[1]:11s} hw {hm:8.3f} sim {sm:8.3f}  diff {sm-hm:+.3f} ms")
