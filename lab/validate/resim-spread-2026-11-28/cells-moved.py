# Cells of two validate-resim outputs (cells.csv) whose simulated mean moved by 0.2% of the hardware mean or more:
# signed mean error and median |error| before -> after, pass or miss.
#   python3 cells-moved.py BEFORE/cells.csv AFTER/cells.csv
import csv,sys
def load(p):
    return {r['id']:r for r in csv.DictReader(open(p))}
a=load(sys.argv[1]); b=load(sys.argv[2])
rows=[]
for k,r in a.items():
    if r['status']!='ok' or k not in b: continue
    s0=float(r['sim_mean_ms']); s1=float(b[k]['sim_mean_ms']); hw=float(r['hw_mean_ms'])
    if abs(s1-s0)/hw<0.002: continue
    rows.append((r['policy'],r['model'],r['prompt_tokens'],r['budget'],r['trace_kind'],(s0/hw-1)*100,(s1/hw-1)*100,float(r['error_median'])*100,float(b[k]['error_median'])*100,r['pass'],b[k]['pass']))
rows.sort()
for x in rows: print('%-14s %-10s %6s %4s %-9s mean %+6.2f -> %+6.2f   median|err| %5.2f -> %5.2f  %s -> %s'%x)
