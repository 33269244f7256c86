"""
The copy engine's pace against the host memory a chain of single-block copies reaches, free of the
host's issue pace (CUDA graphs, as copy-stride.py): 2,000 copies, idle GPU otherwise, the median of 7
replays, us per copy.
  - span:  each copy's host bytes at a random 64 KiB slot within the first S bytes of an 8 GiB pinned pool;
  - pages: the copies' slots drawn at random from K pages of G bytes (the pages themselves spread at random
    over the pool): how many distinct pages a chain can return to before it pays for reaching them.
H2D and D2H, 17,408 and 65,536 bytes a copy (HBM side: consecutive 64 KiB slots).
"""
import json
import torch

torch.cuda.init()
print(json.dumps({'device': torch.cuda.get_device_name(0), 'torch': torch.__version__, 'cuda': torch.version.cuda}), flush=True)
POOL = 8 << 30
SLOT = 65536
host = torch.empty(POOL, dtype=torch.uint8, pin_memory=True)
hbm = torch.empty(2000 * SLOT, dtype=torch.uint8, device='cuda')
gen = torch.Generator().manual_seed(11)
mem = torch.cuda.Stream()
N = 2000


def pace(offs, size, direction, reps=7):
    g = torch.cuda.CUDAGraph()
    torch.cuda.synchronize()
    with torch.cuda.graph(g, stream=mem):
        for i, o in enumerate(offs):
            d = hbm[i * SLOT:i * SLOT + size]
            h = host[o:o + size]
            if direction == 'h2d':
                d.copy_(h, non_blocking=True)
            else:
                h.copy_(d, non_blocking=True)
    out = []
    for _ in range(reps + 1):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        with torch.cuda.stream(mem):
            a.record(mem)
            g.replay()
            b.record(mem)
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b) * 1000 / N)
    out = sorted(out[1:])
    return round(out[len(out) // 2], 3)


def span_offsets(span):
    slots = span // SLOT
    if slots >= N:
        return [p * SLOT for p in torch.randperm(slots, generator=gen)[:N].tolist()]
    return [p * SLOT for p in torch.randint(0, slots, (N,), generator=gen).tolist()]


def page_offsets(k, page):
    pages = torch.randperm(POOL // page, generator=gen)[:k].tolist()
    per = max(1, page // SLOT)
    picks = torch.randint(0, k, (N,), generator=gen).tolist()
    within = torch.randint(0, per, (N,), generator=gen).tolist()
    return [pages[p] * page + w * SLOT for p, w in zip(picks, within)]


MB = 1 << 20
for direction in ['h2d', 'd2h']:
    for size in [17408, 65536]:
        row = {'kind': 'span', 'direction': direction, 'bytes': size}
        for s in [4, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192]:
            row[f'{s}MiB'] = pace(span_offsets(s * MB), size, direction)
        row['consecutive'] = pace([i * SLOT for i in range(N)], size, direction)
        print(json.dumps(row), flush=True)
        for page in [64 * 1024, 2 * MB]:
            row = {'kind': 'pages', 'direction': direction, 'bytes': size, 'page': page}
            for k in [8, 32, 64, 128, 256, 512, 1024, 2000]:
                row[f'k{k}'] = pace(page_offsets(k, page), size, direction)
            print(json.dumps(row), flush=True)
