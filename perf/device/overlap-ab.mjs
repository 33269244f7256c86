// On the GPU machine: where the masking efficiency of perf/hil-bench's overlap row goes. The bench's
// own function (hil/bench/overlap-bench.js: attention on the compute stream, 2 MiB copies on the
// memory stream) in variants that separate the causes, alternated over rounds in one process:
//   h2d-v3      the bench row (32k FP16, no uniform promise: v3, 16 x 2 MiB host -> HBM)
//   h2d-mma     the same with the uniform FP16 promise (tensor-core FP16 kernel)
//   d2h-v3      the copies read HBM instead of writing it
//   h2d-v3-half 8 slabs: does the stall scale with the bytes copied?
//   h2d-v3-4k   4k context (16 MiB of KV, L2-resident): compute that does not read HBM
//   h2d-v3-128k, h2d-mma-128k  128k context, 5 calls: the same bytes per call time in 4x fewer launches
// and the layer-wise prefetch bench (hil/bench/prefetch-bench.js: stall as hil run measures it):
//   pf-h2d      16 layers at 32k (v3), 2 MiB copied per layer during the layer before
//   pf-h2d-mma  the same with the uniform FP16 promise
//   pf-d2h      the copies read HBM (an offload)
//   pf-nofit    4 MiB per layer: the copies take longer than the layers, so the compute must wait
//   pf-paced    pf-h2d with each layer's copy started with the layer (as an executor issues it; the bench row)
//   pf-paced-mma, pf-paced-d2h, pf-paced-nofit  the same with the FP16 promise, reading HBM, 4 MiB per layer
//   pf-paced-128k  128k context, 8 MiB per layer
//   node perf/device/overlap-ab.mjs DIST OUT.json [ROUNDS]   (OVERLAP_ONLY="name name": those variants only)
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, outJson, roundsArg] = process.argv.slice(2);
if (!dist || !outJson) throw new Error('usage: node perf/device/overlap-ab.mjs DIST OUT.json [ROUNDS]');
const rounds = Number(roundsArg ?? 3);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`ROUNDS: expected a positive whole number, got ${roundsArg}`);
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { benchOverlap } = await load('hil/bench/overlap-bench.js');
const { benchPrefetch } = await load('hil/bench/prefetch-bench.js');
const b = openBackend('cuda');
const MiB = 1 << 20;
const base = { contextTokens: 32768, attnRepeat: 20, slabBytes: 2 * MiB, slabs: 16 };
const variants = [
  ['h2d-v3', base],
  ['h2d-mma', { ...base, uniformFp16: true }],
  ['d2h-v3', { ...base, direction: 'd2h' }],
  ['h2d-v3-half', { ...base, slabs: 8 }],
  ['h2d-v3-4k', { ...base, contextTokens: 4096, attnRepeat: 80 }],
  ['h2d-v3-128k', { ...base, contextTokens: 131072, attnRepeat: 5 }],
  ['h2d-mma-128k', { ...base, contextTokens: 131072, attnRepeat: 5, uniformFp16: true }],
];
const pf = { contextTokens: 32768, layers: 16, attnPerLayer: 1, slabBytes: 2 * MiB, slabsPerLayer: 1 };
const pfVariants = [
  ['pf-h2d', pf],
  ['pf-h2d-mma', { ...pf, uniformFp16: true }],
  ['pf-d2h', { ...pf, direction: 'd2h' }],
  ['pf-nofit', { ...pf, slabsPerLayer: 2 }],
  ['pf-paced', { ...pf, paced: true }],
  ['pf-paced-mma', { ...pf, paced: true, uniformFp16: true }],
  ['pf-paced-d2h', { ...pf, paced: true, direction: 'd2h' }],
  ['pf-paced-nofit', { ...pf, paced: true, slabsPerLayer: 2 }],
  ['pf-paced-128k', { ...pf, paced: true, contextTokens: 131072, slabsPerLayer: 4 }],
];
const only = (process.env.OVERLAP_ONLY ?? '').split(/\s+/).filter(Boolean);
const names = [...variants, ...pfVariants].map(([v]) => v);
const unknown = only.filter((n) => !names.includes(n));
if (unknown.length) throw new Error(`OVERLAP_ONLY: unknown variant ${unknown.join(', ')}; choices: ${names.join(', ')}`);
if (only.length) {
  variants.splice(0, variants.length, ...variants.filter(([v]) => only.includes(v)));
  pfVariants.splice(0, pfVariants.length, ...pfVariants.filter(([v]) => only.includes(v)));
}
const rows = [];
try {
  for (let r = 1; r <= rounds; r++) {
    for (const [name, opts] of variants) {
      const o = await benchOverlap(b, opts);
      const slow = o.computeWhileCopyingMs - o.computeMs;
      rows.push({ round: r, name, ...opts, ...o });
      console.log(`r${r} ${name}: compute ${o.computeMs.toFixed(3)} ms, copy ${o.copyMs.toFixed(3)} ms, both ${o.bothMs.toFixed(3)} ms (copies end at ${o.copyWhileComputingMs.toFixed(3)}), compute slowed ${(1000 * slow).toFixed(1)} us (${((100 * slow) / o.copyMs).toFixed(1)}% of the copy time), masking ${(100 * o.maskingEfficiency).toFixed(1)}%, gate held in ${o.gateHeld} of ${o.gateTrials} trials`);
    }
    for (const [name, opts] of pfVariants) {
      const o = await benchPrefetch(b, opts);
      rows.push({ round: r, name, ...opts, ...o });
      const waits = o.lastTrial.ready.map((t, l) => (1000 * (t - o.lastTrial.copied[l])).toFixed(0)).join(' ');
      console.log(`r${r} ${name}: copies ${o.copyMs.toFixed(3)} ms (${o.copyUnderComputeMs.toFixed(3)} under the kernels; layer start - data in, us: ${waits}), kernels ${o.computeMs.toFixed(3)} ms alone / ${o.computeUnderCopiesMs.toFixed(3)} ms under copies, step ${o.latencyAloneMs.toFixed(3)} / ${o.latencyMs.toFixed(3)} ms, still ${(1000 * o.gapsAloneMs).toFixed(1)} / ${(1000 * o.stallMs).toFixed(1)} us (${o.layersStalled} layers), masking ${(100 * o.maskingEfficiency).toFixed(1)}% (every gap ${(100 * o.maskingEveryGap).toFixed(1)}%), slowed ${(100 * o.slowdownShare).toFixed(1)}% of the copy time, counting it ${(100 * o.maskingCountingSlowdown).toFixed(1)}%, gate held in ${o.gateHeld} of ${o.gateTrials}`);
    }
  }
  writeFileSync(outJson, JSON.stringify({ utc: new Date().toISOString(), rows }, null, 1));
} finally {
  b.close();
}
