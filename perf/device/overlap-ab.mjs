// On the GPU machine: where the masking efficiency of perf/hil-bench's overlap row goes. The bench's
// own function (hil/bench/overlap-bench.js: attention on the compute stream, 2 MiB copies on the
// memory stream) in variants that separate the causes, alternated over rounds in one process:
//   h2d-v3      the bench row (32k FP16, no uniform promise: v3, 16 x 2 MiB host -> HBM)
//   h2d-mma     the same with the uniform FP16 promise (tensor-core FP16 kernel)
//   d2h-v3      the copies read HBM instead of writing it
//   h2d-v3-half 8 slabs: does the stall scale with the bytes copied?
//   h2d-v3-4k   4k context (16 MiB of KV, L2-resident): compute that does not read HBM
//   node perf/device/overlap-ab.mjs DIST OUT.json [ROUNDS]
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
const b = openBackend('cuda');
const MiB = 1 << 20;
const base = { contextTokens: 32768, attnRepeat: 20, slabBytes: 2 * MiB, slabs: 16 };
const variants = [
  ['h2d-v3', base],
  ['h2d-mma', { ...base, uniformFp16: true }],
  ['d2h-v3', { ...base, direction: 'd2h' }],
  ['h2d-v3-half', { ...base, slabs: 8 }],
  ['h2d-v3-4k', { ...base, contextTokens: 4096, attnRepeat: 80 }],
];
const rows = [];
try {
  for (let r = 1; r <= rounds; r++) {
    for (const [name, opts] of variants) {
      const o = await benchOverlap(b, opts);
      const slow = o.computeWhileCopyingMs - o.computeMs;
      rows.push({ round: r, name, ...opts, ...o });
      console.log(`r${r} ${name}: compute ${o.computeMs.toFixed(3)} ms, copy ${o.copyMs.toFixed(3)} ms, both ${o.bothMs.toFixed(3)} ms, compute slowed ${(1000 * slow).toFixed(1)} us (${((100 * slow) / o.copyMs).toFixed(1)}% of the copy time), masking ${(100 * o.maskingEfficiency).toFixed(1)}%, gate held in ${o.gateHeld} of ${o.gateTrials} trials`);
    }
  }
  writeFileSync(outJson, JSON.stringify({ utc: new Date().toISOString(), rows }, null, 1));
} finally {
  b.close();
}
