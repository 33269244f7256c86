"""Offline (no GPU): the SynapseVM 40% cell re-simulated with single PCIe terms of this run's Llama-3-8B profile set to
another H200 calibration's value (validate-resim per variant; strict median |error| and the means).
  python3 lab/validate/run-f86b03a-h200-seed181-2026-11-28/alpha-swap.py   (from the repo root, after npm run build)
"""
import copy, json, os, shutil, subprocess, sys
R = 'lab/validate/run-f86b03a-h200-seed181-2026-11-28'
B = json.load(open(f'{R}/profiles/llama-3-8b.json'))
v = json.load(open(f'{R}/validate.json'))
cells = [c for c in v['cells'] if 'broad-every' in c['trace'] and c['label'] in ('synapsevm',) and c['budget']=='40%']
def run(name, mod):
    d = f'/tmp/swap1/{name.replace(" ","_")}'
    shutil.rmtree(d, ignore_errors=True); os.makedirs(d + '/cells')
    shutil.copytree(f'{R}/profiles', d + '/profiles', dirs_exist_ok=True)
    p = copy.deepcopy(B); mod(p)
    json.dump(p, open(d + '/profiles/llama-3-8b.json', 'w'), indent=1)
    json.dump({**v, 'cells': cells}, open(d + '/validate.json', 'w'))
    for c in cells: shutil.copy(f"{R}/cells/{c['id']}.json", d + '/cells/')
    subprocess.run(['node', 'bin/kvtier.js', 'hil', 'validate-resim', d, '--out', d + '-out', '--force'], stdout=subprocess.DEVNULL, check=True)
    o = json.load(open(d + '-out/validate.json'))
    c=o['cells'][0]; print(f"{name:40}", '%.2f sim %.2f hw %.2f'%(100*c['error']['median'], c['sim_dist']['mean'], c['hw_dist']['mean']), flush=True)
def setk(path, val):
    def f(p):
        x=p
        for k in path[:-1]: x=x[k]
        if val is None: x.pop(path[-1], None)
        else: x[path[-1]]=val
    return f
run('as calibrated', lambda p: None)
run('no adjacent term', setk(['links',0,'b_to_a','adjacent_us'], None))
run('adjacent 0.234 (s173)', setk(['links',0,'b_to_a','adjacent_us'], 0.234))
run('switch 0 / 2.07 (s157)', lambda p: [setk(['links',0,d,k],v)(p) for d in ('a_to_b','b_to_a') for k,v in (('switch_us',0),('switch_under_compute_us',2.07))])
run('h2d alpha 3.09 (s179)', setk(['links',0,'b_to_a','alpha_us'], 3.09))
run('spread 0.088 (s179)', setk(['links',0,'b_to_a','spread_us'], 0.088))
