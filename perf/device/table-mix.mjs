// On the GPU machine (plain node, compiled JS): the per-block table attention kernel on the tables a
// policy really attends, beside the calibration's tables at the same context. Reads TABLES (JSON:
// { tables: [{ cell, layer, tokens, codes }] }, codes one digit per block: 0 fp16, 1 int8, 2 int4,
// 3 int2, 4 int3; e.g. lab/data/hil/smartkv-tables-seed89.json), and per distinct context times
// Llama-3-8B's attention (32 q heads, 8 KV heads, head dim 128, 16-token blocks, groups of 128) over:
// INT8 and INT2 throughout, the calibration's 'mixed', 'mixed_sparse' and 'mixed_interleaved' tables,
// and every listed table; ROUNDS rounds (default 2), cases alternated, each the median of 10 gated trials.
// VARIANTS=1 adds, per listed table: its FP16, INT4 and INT3 blocks made INT2 ('two precisions'), its
// blocks in a seeded random order ('shuffled') and in precision order ('sorted': one run per precision).
// SYNTH=1 adds, per context, INT2 tables with INT8 runs of r blocks (r = 1, 2, 3, 4, 8, 16) spread evenly at
// INT8 shares of 1/6 and 1/2 ('int8 share S in runs of r').
//   node perf/device/table-mix.mjs DIST TABLES     (KVTIER_HIL_ADDON names the addon)
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, file] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { benchAttention, mixedAtInt8Bits } = await load('hil/bench/attention-bench.js');
const { ComputeGate } = await load('hil/bench/gate.js');
const { tableOf } = await load('hil/calibrate/measure.js');
const data = JSON.parse(readFileSync(file, 'utf8'));
const CODE = ['fp16', 'int8', 'int4', 'int2', 'int3'];
const geo = { qHeads: 32, kvHeads: 8, headDim: 128, blockTokens: 16, groupSize: 128 };
const rounds = Number(process.env.ROUNDS ?? 2);
const b = openBackend('cuda');
console.log(`device ${b.info().name}`);
const gate = await ComputeGate.open(b);
try {
  const mixed = mixedAtInt8Bits({ kvHeads: geo.kvHeads, blockTokens: geo.blockTokens, headDim: geo.headDim, groupSize: geo.groupSize });
  for (const ctx of [...new Set(data.tables.map((t) => t.tokens))].sort((x, y) => x - y)) {
    const cases = ['int8', 'int2', 'mixed', 'mixed_sparse', 'mixed_interleaved'].map((c) => ({ label: c, precisionOf: tableOf(c, mixed.precisionOf) }));
    for (const t of data.tables.filter((x) => x.tokens === ctx)) {
      cases.push({ label: `${t.cell} layer ${t.layer}`, precisionOf: (i) => CODE[Number(t.codes[i])] });
      if (process.env.VARIANTS !== '1') continue;
      const two = t.codes.replace(/[024]/g, '3');
      cases.push({ label: `${t.cell} layer ${t.layer} two precisions`, precisionOf: (i) => CODE[Number(two[i])] });
      const shuffled = [...t.codes];
      let x = 12345;
      for (let i = shuffled.length - 1; i > 0; i--) {
        x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
        const j = x % (i + 1);
        [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
      }
      cases.push({ label: `${t.cell} layer ${t.layer} shuffled`, precisionOf: (i) => CODE[Number(shuffled[i])] });
      const sorted = [...t.codes].sort();
      cases.push({ label: `${t.cell} layer ${t.layer} sorted`, precisionOf: (i) => CODE[Number(sorted[i])] });
    }
    if (process.env.SYNTH === '1') {
      for (const share of [1 / 6, 1 / 2]) {
        for (const r of [1, 2, 3, 4, 8, 16]) {
          const period = Math.round(r / share);
          cases.push({ label: `int8 share ${share.toFixed(3)} in runs of ${r}`, precisionOf: (i) => (i % period < r ? 'int8' : 'int2') });
        }
      }
    }
    const us = new Map(cases.map((c) => [c.label, []]));
    for (let r = 0; r < rounds; r++) {
      for (const c of cases) {
        const row = await benchAttention(b, { label: c.label, contextTokens: ctx, ...geo, precisionOf: c.precisionOf, gate }, 10);
        us.get(c.label).push(row.us);
      }
    }
    for (const c of cases) console.log(`context ${ctx} | ${c.label} | ${us.get(c.label).map((x) => x.toFixed(2)).join(' ')} us`);
  }
} finally {
  gate.free();
  b.close();
}
