"""Synthetic read batches in perf/nvme-bench.c's replay format, like the calibration's sized batches
(hil/bench: one 12 KiB request per 64 KiB block slot over ~80% of a layer of 388 slots, a batch per layer):
16 steps of 32 batches of 310 requests each. `compact`: the 32 batches cycle over 4 layers of slots
(97 MiB of slots, as the calibration's); `spread`: batch l over layer l of 32 (the slots of a 32-layer,
512-block-per-layer file of 1 GiB, as a Llama-3-8B 8k run's).
  python3 synth-reads.py compact|spread OUT.txt"""
import random, sys

kind, out = sys.argv[1], sys.argv[2]
SLOT, REQ = 65536, 12288
layers, per_layer = (4, 388) if kind == 'compact' else (32, 512)
rng = random.Random(1)
lines = [str(layers * per_layer * SLOT)]
for step in range(16):
    for b in range(32):
        layer = b % layers
        picks = sorted(rng.sample(range(per_layer), 310))
        lines.append(f'B {step} 310')
        lines += [f'{(layer * per_layer + i) * SLOT} {REQ}' for i in picks]
open(out, 'w').write('\n'.join(lines) + '\n')
