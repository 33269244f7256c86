// H2D copies smaller than a block in two layouts, on the GPU (compiled JS, the CUDA addon), to see what sets
// the executor's per-copy cost of quantized blocks:
// - "executor": a prefetch as lower-staging.ts lays it out: consecutive blocks of a layer, each from its
//   FP16-sized host slot, packed one after another into one staging-ring extent;
// - "calibration": the calibration's single-block batch (layout-batches.ts "runs of 1": gaps of 1..3 blocks
//   between copies, ring offsets a whole block apart), each copy cut to the size.
// Each at several sizes, behind a gate (the copies' own time) and as the host issues them (no gate).
// COMPUTE=1: the executor layout again behind a gate with attention + layer GEMVs on the compute
// stream throughout (Llama-3-8B's layer GEMV), as its prefetches run beside a layer. JSON=PATH: the
// points, for fitting offline.
// Per batch: 8 groups (layers) of N copies; printed: us per copy (the batch's time over its copies, the
// groups' fixed cost included) and the host's time to issue one copy (enqueue time over copies).
//   node lab/experiments/small-copy-pattern.mjs DIST [N]   (BACKEND=host to try it without a GPU)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, nArg] = process.argv.slice(2);
if (!dist) throw new Error('usage: node lab/experiments/small-copy-pattern.mjs DIST [N]');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { benchLayoutCopies } = await load('hil/bench/layout-copy-bench.js');
const { layoutBatches, layoutOptions } = await load('hil/bench/layout-batches.js');
const N = Number(nArg ?? 200);
const B = 65536; // Llama-3-8B's FP16 block (16 tokens)
const M = 512;
const layers = 8;
const g = { kvHeads: 8, blockTokens: 16, headDim: 128, groupSize: 128 };
const b = openBackend(process.env.BACKEND ?? 'cuda');
const base = layoutBatches(layoutOptions(B, M));
const ringBytes = base.ringBytes;

function batchOf(label, groups) {
  const runs = groups.reduce((n, x) => n + x.length, 0);
  const bytes = groups.reduce((n, x) => n + x.reduce((m, c) => m + c[2], 0), 0);
  return { direction: 'h2d', label, groups, groupDirections: groups.map(() => 'h2d'), switches: 0, runs, bytes, lengths: {}, split: { h2d: { runs, bytes }, d2h: { runs: 0, bytes: 0 } } };
}
const executor = (size) => batchOf(`executor ${size}`, Array.from({ length: layers }, (_, l) => Array.from({ length: N }, (_, i) => [(l * M + i) * B, (l % 2) * (ringBytes / 2) + i * size, size])));
const calibration = (size) => {
  const runsOf1 = base.batches.find((x) => x.direction === 'h2d' && x.label === 'runs of 1');
  return batchOf(`calibration ${size}`, runsOf1.groups.map((grp) => grp.map(([s, d]) => [s, d, size])));
};
const all = [];
console.log(`N=${N} copies per group (executor pattern), ${layers} groups; ${base.batches.find((x) => x.label === 'runs of 1').runs} copies in the calibration's batch`);
for (const gated of [true, false]) {
  for (const size of [9216, 19456, 33792, 65536]) {
    for (const make of [executor, calibration]) {
      const batch = make(size);
      const plan = { ...base, batches: [batch] };
      const r = await benchLayoutCopies(b, { plan, geometry: g, qHeads: 32, contextTokens: 1024, gemvRows: 4096, gemvCols: 4096, trials: 7, compute: false, gated });
      const p = r.points[0];
      all.push({ layout: make === executor ? 'executor' : 'calibration', gated, compute: false, size, ...p });
      console.log(`${gated ? 'gated ' : 'issued'} ${batch.label.padEnd(18)} copies ${String(p.runs).padStart(5)}  ${(p.us / p.runs).toFixed(3)} us per copy  enqueue ${(p.enqueue_us / p.runs).toFixed(3)} us per copy`);
    }
  }
}
if (process.env.COMPUTE === '1') {
  for (const size of [9216, 17408, 33792, 65536]) {
    const batch = executor(size);
    const plan = { ...base, batches: [batch] };
    const r = await benchLayoutCopies(b, { plan, geometry: g, qHeads: 32, contextTokens: 8192, gemvRows: 53248, gemvCols: 4096, trials: 7, compute: true, gated: true });
    const p = r.points[0];
    all.push({ layout: 'executor', gated: true, compute: true, size, ...p, layer_us: r.layer_us });
    console.log(`gated+compute ${batch.label.padEnd(14)} copies ${String(p.runs).padStart(5)}  ${(p.us / p.runs).toFixed(3)} us per copy  compute cover ${p.compute_cover.toFixed(2)}  compute extra ${p.compute_extra_us.toFixed(1)} us  layer ${r.layer_us.toFixed(1)} us`);
  }
}
if (process.env.JSON) (await import('node:fs')).writeFileSync(process.env.JSON, JSON.stringify(all, null, 1) + '\n');
b.close?.();
