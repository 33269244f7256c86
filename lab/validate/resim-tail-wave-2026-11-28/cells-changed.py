# The cells whose mean signed error moved (or whose verdict changed) between two validate-resim outputs:
#   python3 cells-changed.py BEFORE_DIR AFTER_DIR [ID_FILTER]
import json, sys
def load(d):
    v=json.load(open(d+'/validate.json'))
    return {c['id']:c for c in v['cells'] if c['status']=='ok'}
B=load(sys.argv[1]); A=load(sys.argv[2])
filt=sys.argv[3] if len(sys.argv)>3 else ''
def sgn(c): return 100*(c['sim_dist']['mean']/c['hw_dist']['mean']-1)
n=0
for k,b in B.items():
    a=A.get(k)
    if not a: continue
    if filt and filt not in k: continue
    ds=sgn(a)-sgn(b)
    if abs(ds)<0.02 and b['judgement']['pass']==a['judgement']['pass']: continue
    n+=1
    print('%-70s %6s mean %+6.2f -> %+6.2f  med %.2f -> %.2f  %s -> %s'%(k[:70], b['pool'][:10], sgn(b), sgn(a), 100*b['error']['median'], 100*a['error']['median'], b['judgement']['pass'], a['judgement']['pass']))
print(n,'cells changed')
