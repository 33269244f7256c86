"""Offline (no GPU): this run re-simulated as calibrated; with the H2D alpha of the copy batches' first timing
(Llama-3-8B 3.01 us, Llama-2-7B 2.73 us: validate.json profiles[].copies_retimed, before the lesser of two timings
was kept; the rest of each profile as calibrated); and with every hbm-link spread_us at 0.059 (seed 181's
Llama-3-8B value). The pools of each (pools.mjs).
  python3 lab/validate/run-fc24601-h200-seed191-2026-11-28/alpha-spread.py   (from the repo root, after npm run build)
"""
import json, os, shutil, subprocess
R='lab/validate/run-fc24601-h200-seed191-2026-11-28'
def run(name, alpha8=None, alpha7=None):
  d=f'/tmp/alpha-spread/{name}'; shutil.rmtree(d, ignore_errors=True); shutil.rmtree(d+'-out', ignore_errors=True)
  shutil.copytree(R, d)
  for m,a in (('llama-3-8b',alpha8),('llama-2-7b',alpha7)):
    if a is None: continue
    p=json.load(open(f'{d}/profiles/{m}.json'))
    for l in p['links']:
      if 'hbm' in (l['a'],l['b']): l['a_to_b' if l['b']=='hbm' else 'b_to_a']['alpha_us']=a
    json.dump(p, open(f'{d}/profiles/{m}.json','w'), indent=1)
  subprocess.run(['node','bin/kvtier.js','hil','validate-resim',d,'--out',d+'-out','--force'],stdout=subprocess.DEVNULL,check=True)
  print('==', name); subprocess.run(['node','lab/validate/tools/pools.mjs',d+'-out'])
run('asis')
run('first-alpha', 3.01, 2.73)

def runspread(name, sp):
  d=f'/tmp/alpha-spread/{name}'; shutil.rmtree(d, ignore_errors=True); shutil.rmtree(d+'-out', ignore_errors=True)
  shutil.copytree(R, d)
  for m in ('llama-3-8b','llama-2-7b'):
    p=json.load(open(f'{d}/profiles/{m}.json'))
    for l in p['links']:
      if 'hbm' in (l['a'],l['b']):
        for k in ('a_to_b','b_to_a'):
          if 'spread_us' in l[k]: print(m, k, l[k]['spread_us'], '->', sp); l[k]['spread_us']=sp
    json.dump(p, open(f'{d}/profiles/{m}.json','w'), indent=1)
  subprocess.run(['node','bin/kvtier.js','hil','validate-resim',d,'--out',d+'-out','--force'],stdout=subprocess.DEVNULL,check=True)
  print('==', name); subprocess.run(['node','lab/validate/tools/pools.mjs',d+'-out'])
runspread('spread-0.059', 0.059)
