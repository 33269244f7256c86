// On the GPU machine: the attention benchmark's own function (hil/bench/attention-bench.js, as
// perf/hil-bench.js --only attention: median of 10 x 5 launches incl. the merge) for every precision
// of the bench (fp16, int8, int4, int2, mixed fp16+int4) at 4k, 32k and 128k, Llama-3-8B layer, in one
// process with the knobs of the environment; perf/device/run.sh NAME ab alternates variants.
//   node perf/device/attn-ab.mjs DIST OUT.json LABEL
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, outJson, label] = process.argv.slice(2);
if (!dist || !outJson || !label) throw new Error('usage: node perf/device/attn-ab.mjs DIST OUT.json LABEL');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const b = openBackend('cuda');
const llama = { qHeads: 32, kvHeads: 8, headDim: 128, blockTokens: 16, groupSize: 128 };
const { benchAttention, mixedAtInt8Bits } = await load('hil/bench/attention-bench.js');
// ATTN_AB_GATE=1 (optional): every trial behind a gate (hil/bench/gate.ts), the host's launch time untimed
const { ComputeGate } = await load('hil/bench/gate.js');
const gate = process.env.ATTN_AB_GATE === '1' ? await ComputeGate.open(b) : undefined;
// the bench's mixed table (perf/hil-bench.ts): FP16 sink + recent blocks, INT4 elsewhere, at INT8's average bits
const mixed = mixedAtInt8Bits({ kvHeads: llama.kvHeads, blockTokens: llama.blockTokens, headDim: llama.headDim, groupSize: llama.groupSize }).precisionOf;
// ATTN_AB_ONLY=fp16,int4 (optional): only those precisions
const only = process.env.ATTN_AB_ONLY?.split(',');
const variants = [['fp16', () => 'fp16'], ['int8', () => 'int8'], ['int4', () => 'int4'], ['int2', () => 'int2'], ['mixed', mixed]].filter(([p]) => !only || only.includes(p));
const knobs = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('KVTIER_HIL_ATTN_')));
const rows = [];
const t0 = Date.now();
for (const L of [4096, 32768, 131072]) {
  const line = [];
  for (const [p, precisionOf] of variants) {
    const r = await benchAttention(b, { label: p, contextTokens: L, ...llama, precisionOf, gate });
    rows.push({ label: p, contextTokens: L, us: r.us, kvBytes: r.kvBytes, ...(gate ? { gateHeld: r.gateHeld, gateTrials: r.gateTrials } : {}) });
    line.push(`${p} ${r.us.toFixed(1)}${gate ? ` (gate held ${r.gateHeld}/${r.gateTrials})` : ''}`);
  }
  console.log(`${label} L=${L} ${line.join(' ')}`);
}
gate?.free();
writeFileSync(outJson, JSON.stringify({ label, knobs, gated: !!gate, utc: new Date().toISOString(), seconds: (Date.now() - t0) / 1000, rows }, null, 1));
b.close();
