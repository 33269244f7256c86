"""Offline (no GPU): this run re-simulated as calibrated, then with each model's GEMV terms (gpu.linear_GBps,
linear_launch_us) taken from the seed-181 run's profile of the same model; the pools of each (pools.mjs).
  python3 lab/validate/run-fc24601-h200-seed191-2026-11-28/linear-swap.py   (from the repo root, after npm run build)
"""
import copy, json, os, shutil, subprocess
R='lab/validate/run-fc24601-h200-seed191-2026-11-28'
O='lab/validate/run-f86b03a-h200-seed181-2026-11-28'
v=json.load(open(f'{R}/validate.json'))
def run(name, mods):
  d=f'/tmp/swl/{name}'; shutil.rmtree(d, ignore_errors=True); os.makedirs(d+'/cells')
  shutil.copytree(f'{R}/profiles', d+'/profiles', dirs_exist_ok=True)
  for m,keys in mods.items():
    p=json.load(open(f'{R}/profiles/{m}.json')); q=json.load(open(f'{O}/profiles/{m}.json'))
    for k in keys: p['gpu'][k]=q['gpu'][k]
    json.dump(p, open(d+f'/profiles/{m}.json','w'), indent=1)
  json.dump(v, open(d+'/validate.json','w'))
  for c in v['cells']:
    if os.path.exists(f"{R}/cells/{c['id']}.json"): shutil.copy(f"{R}/cells/{c['id']}.json", d+'/cells/')
  subprocess.run(['node','bin/kvtier.js','hil','validate-resim',d,'--out',d+'-out','--force'],stdout=subprocess.DEVNULL,check=True)
  subprocess.run(['node','lab/validate/tools/pools.mjs',d+'-out'])
run('asis', {})
run('linear181', {'llama-3-8b':['linear_GBps','linear_launch_us'],'llama-2-7b':['linear_GBps','linear_launch_us']})
