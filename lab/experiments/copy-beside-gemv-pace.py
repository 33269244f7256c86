"""Per memory-stream batch of a HIL run and of the simulator's run of the same plan (the k-th of a step against the
k-th, as batch-pace.py pairs them): the time per copy inside the layers' GEMVs, taking the part of the batch outside
the GEMVs at IDLE us per copy plus OVER us per batch.
  python3 lab/experiments/copy-beside-gemv-pace.py CELLDIR POLICY IDLE OVER   (CELLDIR as batch-pace.py takes it)
"""
import json,sys,statistics as st
import os
exec(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'batch-pace.py')).read().split("cell,pol=sys.argv[1],sys.argv[2]")[0])
cell,pol,idle,over=sys.argv[1],sys.argv[2],float(sys.argv[3]),float(sys.argv[4])
H=load(f'{cell}/hil-{pol}/trace.json'); S=load(f'{cell}/sim-{pol}/trace.json')
res={'hw':{}, 'sim':{}}
for step in sorted(H):
    if step==0: continue
    h=rows(H,step); s=rows(S,step)
    if len(h)!=len(s): continue
    for name,R in (('hw',h),('sim',s)):
        for (lab,dur,ovg,ova,_r,b),(_l,_d,_o,_a,runs,_b) in zip(R,s):
            if not runs or ovg<50: continue
            outside=max(0,(dur-ovg-over)/idle); inside=runs-outside
            if inside<5: continue
            res[name].setdefault(lab,[]).append(ovg/inside)
for name in res:
    for lab,v in res[name].items(): print(pol,name,lab,'batches',len(v),'us per copy inside GEMV: median %.2f p25 %.2f p75 %.2f'%(st.median(v),sorted(v)[len(v)//4],sorted(v)[3*len(v)//4]))
