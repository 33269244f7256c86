// On the GPU machine: the attention benchmark's own function (hil/bench/attention-bench.js, as
// perf/hil-bench.js --only attention: median of 10 x 5 launches incl. the merge, each trial behind a
// gate, hil/bench/gate.ts) for every precision of the bench (fp16, int8, int4, int2, mixed fp16+int4)
// at 4k, 32k and 128k, Llama-3-8B layer, in one process with the attention options given after the
// label (kvtier hil options); perf/device/run.sh NAME ab alternates variants.
//   node perf/device/attn-ab.mjs DIST OUT.json LABEL [KEY=VALUE ...]
// ATTN_AB_GATE=0: time without the gate (the host's launch of a trial's first call is then timed).
// ATTN_AB_ONLY=fp16,int4: only those precisions.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, outJson, label, ...optionArgs] = process.argv.slice(2);
if (!dist || !outJson || !label) throw new Error('usage: node perf/device/attn-ab.mjs DIST OUT.json LABEL [KEY=VALUE ...]');
const PRECISIONS = ['fp16', 'int8', 'int4', 'int2', 'mixed'];
const gateEnv = process.env.ATTN_AB_GATE ?? '1';
if (gateEnv !== '0' && gateEnv !== '1') throw new Error(`ATTN_AB_GATE=${gateEnv}: expected 1 (default) or 0`);
const only = process.env.ATTN_AB_ONLY?.split(',');
for (const p of only ?? []) {
  if (!PRECISIONS.includes(p)) throw new Error(`ATTN_AB_ONLY: "${p}" is not one of ${PRECISIONS.join(', ')}`);
}
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { attnFlag } = await load('hil/attention-options.js');
const { benchAttention, mixedAtInt8Bits } = await load('hil/bench/attention-bench.js');
const { ComputeGate } = await load('hil/bench/gate.js');
const llama = { qHeads: 32, kvHeads: 8, headDim: 128, blockTokens: 16, groupSize: 128 };
// the bench's mixed table (perf/hil-bench.ts): FP16 sink + recent blocks, INT4 elsewhere, at INT8's average bits
const mixed = mixedAtInt8Bits({ kvHeads: llama.kvHeads, blockTokens: llama.blockTokens, headDim: llama.headDim, groupSize: llama.groupSize }).precisionOf;
const table = { fp16: () => 'fp16', int8: () => 'int8', int4: () => 'int4', int2: () => 'int2', mixed };
const variants = PRECISIONS.filter((p) => !only || only.includes(p));
const attn = optionArgs.reduce((o, kv) => attnFlag(kv, o), {});
const b = openBackend('cuda', 0, attn);
const options = b.attentionOptions();
let gate;
try {
  gate = gateEnv === '1' ? await ComputeGate.open(b) : undefined;
  const rows = [];
  const t0 = Date.now();
  for (const L of [4096, 32768, 131072]) {
    const line = [];
    for (const p of variants) {
      const r = await benchAttention(b, { label: p, contextTokens: L, ...llama, precisionOf: table[p], gate });
      rows.push({ label: p, contextTokens: L, us: r.us, kvBytes: r.kvBytes, ...(gate ? { gateHeld: r.gateHeld, gateTrials: r.gateTrials } : {}) });
      line.push(`${p} ${r.us.toFixed(1)}${gate ? ` (gate held ${r.gateHeld}/${r.gateTrials})` : ''}`);
    }
    console.log(`${label} L=${L} ${line.join(' ')}`);
  }
  writeFileSync(outJson, JSON.stringify({ label, attention_options: options, gated: !!gate, utc: new Date().toISOString(), seconds: (Date.now() - t0) / 1000, rows }, null, 1));
} finally {
  gate?.free();
  b.close();
}
