// On the GPU machine (plain node, compiled JS): the per-block table attention kernel in situ, Llama-3-8B, over
// tables of INT8 and INT2 blocks in several make-ups and orders, beside FP16. Each table is timed as the
// calibration times attention in situ (hil/calibrate/measure.ts measureChain: layers x (marks, attention, marks,
// layer GEMV), per layer minus the GEMV alone), ROUNDS rounds alternated, at the contexts of CONTEXTS. Tables:
//   fp16, int8, int2            one precision (declared uniform, as the executor declares it)
//   sparse, interleaved         the calibration's change tables (INT2 with every 32nd INT8; INT2 and INT8 in turn)
//   runs-P-S                    share P of INT8 blocks in runs, a change at share S of the consecutive pairs
//   buckets-P                   share P of INT8 blocks first, then INT2 (one change)
// The printed "model" column is what sim/roofline.ts's table pricing (tableKernelUs + mixedChangeUs) gives from the
// measured fp16/int8/int2/sparse/interleaved rows of the same run.
//   node perf/device/table-ab.mjs DIST     (KVTIER_HIL_ADDON names the addon; BACKEND=host MODEL=FILE for a smoke test)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { benchGemv } = await load('hil/bench/gemv-bench.js');
const { measureChain } = await load('hil/calibrate/measure.js');
const { loadModel } = await load('sim/models/load-model.js');
const { tableKernelUs, mixedChangeUs } = await load('sim/roofline.js');

const rounds = Number(process.env.ROUNDS ?? 3);
const contexts = (process.env.CONTEXTS ?? '4096,8192,32768').split(',').map(Number);
if (!(Number.isInteger(rounds) && rounds >= 1)) throw new Error(`ROUNDS must be a whole number >= 1 (got "${process.env.ROUNDS}")`);
if (!contexts.every((c) => Number.isInteger(c) && c > 0)) throw new Error(`CONTEXTS must be positive whole token counts separated by commas (got "${process.env.CONTEXTS}")`);
const b = openBackend(process.env.BACKEND ?? 'cuda');
const m = loadModel(process.env.MODEL ?? 'llama-3-8b');
const g = { kvHeads: m.kv_heads, blockTokens: 16, headDim: m.head_dim, groupSize: Math.min(128, m.head_dim) };
const trials = 5;
const layers = m.layers;
const rows = Math.max(8, Math.round(m.weight_bytes_per_layer / 2 / m.hidden));
const cols = m.hidden;
const median = (xs) => [...xs].sort((a, c) => a - c)[Math.floor(xs.length / 2)];

/** n blocks, share p of them INT8, in runs so that about share s of the consecutive pairs change (seeded) */
function runsTable(n, p, s, seed) {
  let a = seed >>> 0;
  const rnd = () => ((a = (Math.imul(a, 1664525) + 1013904223) >>> 0) / 4294967296);
  // a two-state chain leaving INT8 with probability q8 and INT2 with q2: INT8's stationary share is
  // q2 / (q8 + q2) = p and the change share p q8 + (1 - p) q2 = 2 p (1 - p) (q8 + q2) = s
  const sum = Math.min(1.999, s / (2 * p * (1 - p)));
  const q2 = p * sum;
  const q8 = sum - q2;
  const out = [];
  let cur = rnd() < p ? 'int8' : 'int2';
  for (let i = 0; i < n; i++) {
    out.push(cur);
    if (rnd() < (cur === 'int8' ? q8 : q2)) cur = cur === 'int8' ? 'int2' : 'int8';
  }
  return out;
}
const TABLES = {
  fp16: (n) => Array(n).fill('fp16'),
  int8: (n) => Array(n).fill('int8'),
  int2: (n) => Array(n).fill('int2'),
  sparse: (n) => Array.from({ length: n }, (_, i) => (i % 32 === 31 ? 'int8' : 'int2')),
  interleaved: (n) => Array.from({ length: n }, (_, i) => (i % 2 === 1 ? 'int8' : 'int2')),
  'buckets-0.69': (n) => Array.from({ length: n }, (_, i) => (i < Math.round(0.69 * n) ? 'int8' : 'int2')),
  'runs-0.69-0.15': (n) => runsTable(n, 0.69, 0.15, 11),
  'runs-0.15-0.26': (n) => runsTable(n, 0.15, 0.26, 12),
  'runs-0.5-0.05': (n) => runsTable(n, 0.5, 0.05, 13),
  'runs-0.5-0.5': (n) => runsTable(n, 0.5, 0.5, 14),
};

const gemv = await benchGemv(b, 'layer', rows, cols, 10);
console.log(`device ${b.info().name}; ${layers} layers; GEMV alone ${gemv.us.toFixed(2)} us; ${rounds} rounds; contexts ${contexts.join(', ')}`);
const o = { model: m, blockTokens: g.blockTokens, groupSize: g.groupSize, quick: true, fileDir: '/tmp' };

/** the calibration's in-situ chain (measureChain) over one table: us per layer beyond the GEMV alone */
async function situUs(precisions, tokens) {
  const [p] = await measureChain(b, o, [tokens], rows, cols, gemv.us, trials, { precisionOf: (i) => precisions[i] });
  return p.us;
}

// the chains repeated 300 ms before anything is timed
await measureChain(b, o, [contexts[0]], rows, cols, gemv.us, 1, { warmMs: 300 });
for (const tokens of contexts) {
  const n = Math.ceil(tokens / g.blockTokens);
  const res = {};
  for (let r = 0; r < rounds; r++) for (const [name, f] of Object.entries(TABLES)) (res[name] ??= []).push(await situUs(f(n), tokens));
  const us = Object.fromEntries(Object.entries(res).map(([k, v]) => [k, median(v)]));
  const at = (name) => [{ tokens: tokens - 1, us: us[name] }, { tokens, us: us[name] }];
  const k = { fp16: at('fp16'), int8: at('int8'), int2: at('int2'), mixed_sparse: at('sparse'), mixed_interleaved: at('interleaved') };
  console.log(`context ${tokens} (${n} blocks), us per layer beyond the GEMV, median of ${rounds} rounds:`);
  for (const [name, f] of Object.entries(TABLES)) {
    const t = f(n);
    const n8 = t.filter((p) => p === 'int8').length;
    const n2 = t.filter((p) => p === 'int2').length;
    let changes = 0;
    for (let i = 1; i < n; i++) if (t[i] !== t[i - 1]) changes++;
    const share = changes / (n - 1);
    const mixed = n8 > 0 && n2 > 0;
    const model = mixed ? tableKernelUs(k, tokens, [0, n8, 0, n2, 0]) + mixedChangeUs(k, tokens, share) : undefined;
    console.log(`  ${name.padEnd(16)} ${us[name].toFixed(2).padStart(7)}  (rounds ${res[name].map((v) => v.toFixed(2)).join(' ')}; INT8 ${(n8 / n).toFixed(2)}, changes ${share.toFixed(3)})${model !== undefined ? `  model ${model.toFixed(2)}` : ''}`);
  }
}
b.close();
