# Tail-wave models fitted to the FP16 chains timed around each curve point (attention_in_situ of the
# stored calibrations' llama-2-7b.fit.json), split rule given (264 slots, 32 blocks per split, 4 warps per head):
# A: l x tail chunks; B: A and the last split's chunks; per point a level and a slope (then a global slope).
#   python3 lab/validate/resim-tail-wave-2026-11-28/tail-models.py
import json, glob, math, sys, os
import numpy as np
def plan(chunks, kv=32, wph=4, slots=264):
    wanted=(slots+kv-1)//kv
    most=max(1, chunks//(2*wph))
    s=max(1,min(wanted,most))
    pw=(chunks+wph*s-1)//(wph*s)
    s=max(1,(chunks+wph*pw-1)//(wph*pw))
    pw=(chunks+wph*s-1)//(wph*s)
    last=chunks-(s-1)*wph*pw
    pl=(last+wph-1)//wph
    return s,pw,pl,s*kv>slots
def rows_of(f):
    m=json.load(open(f))['measurements'].get('attention_in_situ',[])
    pts=[x for x in m if 'phases' in x and 'around_us' in x]
    rows=[]
    for i,x in enumerate(pts):
        for off,us in zip([0]+x['phases'],[x['us_at_context']]+x['around_us']):
            blocks=x['tokens']//16+off
            s,pw,pl,tail=plan(blocks)
            rows.append((i,off,us,pw,pl,tail))
    return pts,rows
def fit(pts,rows,cols):
    n=len(pts); X=[];y=[]
    for (i,off,us,pw,pl,tail) in rows:
        r=[0]*(2*n); r[2*i]=1; r[2*i+1]=off
        r+=[c(pw,pl,tail) for c in cols]; X.append(r); y.append(us)
    X=np.array(X,float); y=np.array(y)
    beta,*_=np.linalg.lstsq(X,y,rcond=None)
    res=y-X@beta
    return beta[2*n:], math.sqrt(np.mean(res**2)), np.max(np.abs(res))
for f in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'run-*/profiles/llama-2-7b.fit.json'))):
    pts,rows=rows_of(f)
    if not pts: continue
    A=fit(pts,rows,[lambda pw,pl,t: t*pw])
    B=fit(pts,rows,[lambda pw,pl,t: t*pw, lambda pw,pl,t: -t*(pw-pl)])
    print(f.split('/')[-3][4:30], 'A l=%.3f rms %.2f max %.2f'%(A[0][0],A[1],A[2]), '| B ct=%.3f cm=%.3f rms %.2f max %.2f'%(B[0][0],B[0][1],B[1],B[2]))
print('--- global slope')
def fitg(pts,rows,cols):
    n=len(pts); X=[];y=[]
    for (i,off,us,pw,pl,tail) in rows:
        r=[0]*n; r[i]=1; r.append(off)
        r+=[c(pw,pl,tail) for c in cols]; X.append(r); y.append(us)
    X=np.array(X,float); y=np.array(y)
    beta,*_=np.linalg.lstsq(X,y,rcond=None)
    res=y-X@beta
    return beta[n:], math.sqrt(np.mean(res**2)), np.max(np.abs(res))
for f in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'run-*/profiles/llama-2-7b.fit.json'))):
    pts,rows=rows_of(f)
    if not pts: continue
    A=fitg(pts,rows,[lambda pw,pl,t: t*pw])
    B=fitg(pts,rows,[lambda pw,pl,t: t*pw, lambda pw,pl,t: -t*(pw-pl)])
    C=fitg(pts,rows,[lambda pw,pl,t: t*pl])
    print(f.split('/')[-3][4:30], 'A sl=%.3f l=%.3f rms %.2f max %.2f'%(A[0][0],A[0][1],A[1],A[2]), '| B sl=%.3f ct=%.3f cm=%.3f rms %.2f max %.2f'%(B[0][0],B[0][1],B[0][2],B[1],B[2]), '| C(pl) sl=%.3f c=%.3f rms %.2f'%(C[0][0],C[0][1],C[1]))
