"""Offline (no GPU): which part of this run's Llama-3-8B profile makes its data-moving cells read slow.
A copy of the run keeps only the Llama-3-8B 8k cells at 20% (and full), with the profile's parts swapped,
one variant at a time, for those of the Llama-3-8B profile of run-257a842-h200-seed173-2026-11-28 (the
same H200 kind, calibrated at 257a842, 2.5 hours earlier); each copy is re-simulated against the stored
hardware steps (kvtier hil validate-resim) and the cells' strict median |error| printed.
  python3 lab/validate/run-66955ac-h200-seed179-2026-11-28/link-swap.py   (from the repo root, after npm run build)
"""
import copy, json, os, shutil, subprocess, sys

R = 'lab/validate/run-66955ac-h200-seed179-2026-11-28'
OTHER = 'lab/validate/run-257a842-h200-seed173-2026-11-28/profiles/llama-3-8b.json'
TMP = os.environ.get('TMP_DIR', '/tmp/link-swap')
A = json.load(open(OTHER))
B = json.load(open(f'{R}/profiles/llama-3-8b.json'))
v = json.load(open(f'{R}/validate.json'))
POLICIES = ('full', 'lru-offload', 'arc', 'flexgen-static', 'uniform-int8', 'oracle', 'quest', 'infinigen')
cells = [c for c in v['cells'] if 'broad-every' in c['trace'] and c['budget'] in ('20%', '100%') and c['label'] in POLICIES]


def take(*path):
    def f(p):
        x, y = p, A
        for k in path[:-1]:
            x, y = x[k], y[k]
        x[path[-1]] = copy.deepcopy(y[path[-1]])
    return f


def both(*fs):
    def f(p):
        for g in fs:
            g(p)
    return f


VARIANTS = {
    'as calibrated': lambda p: None,
    'all of 173': both(take('gpu'), take('links'), take('tiers')),
    'pcie link of 173': take('links', 0),
    'gpu of 173': take('gpu'),
    'issue costs of 173': both(*[take('gpu', k) for k in ('issue_attention_us', 'issue_convert_us', 'issue_copy_us', 'issue_kernel_us', 'issue_record_us', 'linear_launch_us')]),
    'copy_batch_us of 173': take('gpu', 'copy_batch_us'),
    'attention of 173': both(*[take('gpu', k) for k in ('attention_curve', 'attention_kernels', 'attention_launch_us')]),
    'pcie h2d of 173': take('links', 0, 'b_to_a'),
    'pcie d2h of 173': take('links', 0, 'a_to_b'),
}
shutil.rmtree(TMP, ignore_errors=True)
for i, (name, mod) in enumerate(VARIANTS.items()):
    d = f'{TMP}/{i}'
    os.makedirs(d + '/cells')
    shutil.copytree(f'{R}/profiles', d + '/profiles', dirs_exist_ok=True)
    p = copy.deepcopy(B)
    mod(p)
    json.dump(p, open(d + '/profiles/llama-3-8b.json', 'w'), indent=1)
    json.dump({**v, 'cells': cells}, open(d + '/validate.json', 'w'))
    for c in cells:
        shutil.copy(f"{R}/cells/{c['id']}.json", d + '/cells/')
    subprocess.run(['node', 'bin/kvtier.js', 'hil', 'validate-resim', d, '--out', d + '-out', '--force'], stdout=subprocess.DEVNULL, check=True)
    o = json.load(open(d + '-out/validate.json'))
    print(f"{name:22}", '  '.join(f"{c['label']} {c['error']['median'] * 100:.1f}" for c in o['cells']), flush=True)
