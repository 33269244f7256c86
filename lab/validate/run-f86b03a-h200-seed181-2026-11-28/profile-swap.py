"""Offline (no GPU): which part of this run's Llama-3-8B profile makes its synapsevm and NVMe cells read fast.
A copy of the run keeps only the Llama-3-8B 8k cells of synapsevm and lru-offload-nvme (and full), with
the profile's parts swapped, one variant at a time, for those of the Llama-3-8B profile of another H200
run (run-dc8b7c6-h200-seed157-2026-11-28, where synapsevm passed at every budget); each copy is
re-simulated against the stored hardware steps (kvtier hil validate-resim) and the cells' strict median
|error| printed (signed mean error in brackets, simulated over measured).
  python3 lab/validate/run-f86b03a-h200-seed181-2026-11-28/profile-swap.py   (from the repo root, after npm run build)
"""
import copy, json, os, shutil, subprocess

R = 'lab/validate/run-f86b03a-h200-seed181-2026-11-28'
OTHER = os.environ.get('OTHER', 'lab/validate/run-dc8b7c6-h200-seed157-2026-11-28/profiles/llama-3-8b.json')
TMP = os.environ.get('TMP_DIR', '/tmp/profile-swap')
A = json.load(open(OTHER))
B = json.load(open(f'{R}/profiles/llama-3-8b.json'))
v = json.load(open(f'{R}/validate.json'))
cells = [c for c in v['cells'] if 'broad-every' in c['trace'] and c['label'] in ('full', 'synapsevm', 'lru-offload-nvme')]


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
    'all of the other': both(take('gpu'), take('links'), take('tiers')),
    'host convert': both(take('gpu', 'host_convert_us'), take('gpu', 'issue_convert_us')),
    'issue costs': both(*[take('gpu', k) for k in ('issue_attention_us', 'issue_convert_us', 'issue_copy_us', 'issue_kernel_us', 'issue_record_us', 'linear_launch_us')]),
    'file batch host': take('gpu', 'file_batch_host_us'),
    'pcie link': take('links', 0),
    'disk (tier + link)': both(take('tiers', 3), take('links', 2)),
    'attention': both(*[take('gpu', k) for k in ('attention_curve', 'attention_kernels', 'attention_launch_us')]),
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
    def signed(c):
        return 100 * (c['sim_dist']['mean'] - c['hw_dist']['mean']) / c['hw_dist']['mean']
    print(f"{name:18}", '  '.join(f"{c['label']} {c['budget']} {c['error']['median'] * 100:.1f} ({signed(c):+.1f})" for c in o['cells']), flush=True)
