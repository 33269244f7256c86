// On the GPU machine: the per-block table attention kernel over tables whose precisions change from
// block to block, to see what a mixed table's time depends on (precisions present, number of
// changes). Llama-3-8B layer, each case through hil/bench/attention-bench.js behind a gate.
//   node perf/device/attn-mix.mjs DIST OUT.json [TABLES.json]
// TABLES.json: { "layers": [[precision, ...], ...] } real tables (block precisions in order), timed as
// given and repeated to 32k.
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, outJson, tablesArg] = process.argv.slice(2);
if (!dist || !outJson) throw new Error('usage: node perf/device/attn-mix.mjs DIST OUT.json [TABLES.json]');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { benchAttention, mixedAtInt8Bits } = await load('hil/bench/attention-bench.js');
const { ComputeGate } = await load('hil/bench/gate.js');
const llama = { qHeads: 32, kvHeads: 8, headDim: 128, blockTokens: 16, groupSize: 128 };
const mixed = mixedAtInt8Bits({ kvHeads: 8, blockTokens: 16, headDim: 128, groupSize: 128 }).precisionOf;
// a table kernel over one precision: the last block FP16 so that the table is not uniform
const through = (p) => (i, n) => (i === n - 1 ? 'fp16' : p);
// int2 with int8 every k-th block: 2n/k changes
const every = (k, a = 'int2', b = 'int8') => (i, n) => (i % k === k - 1 ? b : a);
const cases = [
  ['fp16', () => 'fp16'],
  ['int2 uniform', () => 'int2'],
  ['int8 uniform', () => 'int8'],
  ['int2 table', through('int2')],
  ['int3 table', through('int3')],
  ['int4 table', through('int4')],
  ['int8 table', through('int8')],
  ['mixed (calibration)', mixed],
  ['int2+int8 /64', every(64)],
  ['int2+int8 /16', every(16)],
  ['int2+int8 /8', every(8)],
  ['int2+int8 /4', every(4)],
  ['int2+int8 /2', every(2)],
  ['int2+fp16 /8', every(8, 'int2', 'fp16')],
  ['int2+int3 /8', every(8, 'int2', 'int3')],
  ['int2 then int8 (2 runs)', (i, n) => (i < n * 0.85 ? 'int2' : 'int8')],
];
if (tablesArg) {
  const t = JSON.parse(readFileSync(tablesArg, 'utf8'));
  t.layers.forEach((seq, j) => cases.push([`real table ${j}`, (i) => seq[i % seq.length]]));
}
const b = openBackend('cuda');
const gate = await ComputeGate.open(b);
const rows = [];
try {
  for (const ctx of [8192, 32768]) {
    for (const [label, precisionOf] of cases) {
      const r = await benchAttention(b, { label, contextTokens: ctx, ...llama, precisionOf, gate }, 10);
      const n = Math.ceil(ctx / 16);
      let changes = 0;
      for (let i = 1; i < n; i++) if (precisionOf(i, n) !== precisionOf(i - 1, n)) changes++;
      rows.push({ label, context: ctx, us: r.us, changes, avgBits: r.avgBits, gateHeld: r.gateHeld });
      console.log(`${String(ctx).padStart(6)} ${label.padEnd(26)} ${r.us.toFixed(1).padStart(8)} us  changes ${String(changes).padStart(5)}  avg bits ${r.avgBits.toFixed(2)}  gate ${r.gateHeld}/${r.gateTrials}`);
    }
  }
} finally {
  gate.free();
  b.close();
}
writeFileSync(outJson, JSON.stringify({ device: 'cuda', rows }, null, 2));
