// On the GPU machine (plain node, compiled JS): where a step of a policy that moves nothing goes, Llama-3-8B.
// The calibration's layer chain (marks, attention, marks, layer GEMV; hil/calibrate/measure.ts) timed in four
// variants alternated ROUNDS times: its weights (one buffer, as the calibration allocates it, or the run's:
// one per layer filled with seeded halves, hil/executor/model-buffers.ts) x its KV (one cache every layer reads,
// or one per layer), at the contexts of CONTEXTS; the LM-head GEMV alone; the attention kernels alone (FP16,
// INT2, 'mixed' table) at those contexts; then `hil run` steps of h2o at 10% and full on a generated broad 8k trace
// (16 steps, the first left out), so that layers x chain + LM head can be set beside a measured step.
//   node perf/device/chain-ab.mjs DIST     (KVTIER_HIL_ADDON names the addon; BACKEND=host MODEL=FILE for a smoke test)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { buildDeviceCache } = await load('hil/bench/device-cache.js');
const { benchGemv } = await load('hil/bench/gemv-bench.js');
const { ComputeGate } = await load('hil/bench/gate.js');
const { benchAttention, mixedAtInt8Bits } = await load('hil/bench/attention-bench.js');
const { tableOf } = await load('hil/calibrate/measure.js');
const { loadModel } = await load('sim/models/load-model.js');
const { generateTrace } = await load('traces/generator.js');
const { hilRun } = await load('hil/executor/hil-run.js');

const rounds = Number(process.env.ROUNDS ?? 2);
const contexts = (process.env.CONTEXTS ?? '816,3276,8200,32784').split(',').map(Number);
if (!(Number.isInteger(rounds) && rounds >= 1)) throw new Error(`ROUNDS must be a whole number >= 1 (got "${process.env.ROUNDS}")`);
if (!contexts.every((c) => Number.isInteger(c) && c > 0)) throw new Error(`CONTEXTS must be positive whole token counts separated by commas (got "${process.env.CONTEXTS}")`);
const b = openBackend(process.env.BACKEND ?? 'cuda');
const kind = b.kind;
const MODEL = process.env.MODEL ?? 'llama-3-8b';
const m = loadModel(MODEL);
const g = { kvHeads: m.kv_heads, blockTokens: 16, headDim: m.head_dim, groupSize: Math.min(128, m.head_dim) };
const trials = 5;
const layers = m.layers;
const rows = Math.max(8, Math.round(m.weight_bytes_per_layer / 2 / m.hidden));
const cols = m.hidden;
const wBytes = rows * cols * 2;
const median = (xs) => [...xs].sort((a, c) => a - c)[Math.floor(xs.length / 2)];
console.log(`device ${b.info().name}; ${layers} layers, layer GEMV ${rows}x${cols}; ${rounds} rounds; contexts ${contexts.join(', ')}`);

// weights: 'one' as the calibration's chain allocates them (4 MiB of zeros written, the rest as allocated);
// 'run' one buffer per layer, the first filled with seeded halves and copied to the others, as a run's
const one = b.alloc('device', wBytes);
b.write(one, 0, new Uint8Array(Math.min(wBytes, 1 << 22)));
const run = [];
{
  const chunk = new Uint16Array(16 << 20);
  let a = 12345;
  for (let i = 0; i < chunk.length; i++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    // halves in about [-0.03, 0.03]: sign, exponent 8..11 (2^-7..2^-4 x 1.x), random mantissa
    chunk[i] = ((a >>> 31) << 15) | ((8 + ((a >>> 12) & 3)) << 10) | (a & 0x3ff);
  }
  const first = b.alloc('device', wBytes);
  for (let at = 0; at < wBytes; at += chunk.byteLength) b.write(first, at, new Uint8Array(chunk.buffer, 0, Math.min(chunk.byteLength, wBytes - at)));
  run.push(first);
  for (let l = 1; l < layers; l++) {
    const w = b.alloc('device', wBytes);
    b.copy('compute', w, 0, first, 0, wBytes);
    run.push(w);
  }
  await b.synchronize();
}
const x = b.alloc('device', cols * 4);
const headRows = Math.max(8, Math.round(m.other_weight_bytes / 4 / m.hidden));
const y = b.alloc('device', Math.max(rows, headRows) * 4);
b.write(x, 0, new Float32Array(cols).map((_, i) => Math.cos(i)));
const qBytes = m.q_heads * m.head_dim * 4;
const q = b.alloc('device', qBytes);
const out = b.alloc('device', qBytes);
b.write(q, 0, new Float32Array(m.q_heads * m.head_dim).map((_, i) => Math.sin(i * 0.37)));
const marks = Array.from({ length: 4 }, () => b.createEvent());
const e0 = b.createEvent();
const e1 = b.createEvent();

async function chainUs(weights, caches, tokens) {
  const ops = caches.map((c) => ({ arena: c.arena, arenaBytes: c.arenaBytes, table: c.table, q, out, qHeads: m.q_heads, kvHeads: m.kv_heads, headDim: m.head_dim, blockTokens: g.blockTokens, groupSize: g.groupSize, contextTokens: tokens, uniformPrecision: 'fp16' }));
  const chain = () => {
    for (let l = 0; l < layers; l++) {
      b.record('compute', marks[0]);
      b.record('compute', marks[1]);
      b.attention('compute', ops[l % ops.length]);
      b.record('compute', marks[2]);
      b.gemv('compute', { w: weights[l % weights.length], x, y, rows, cols });
      b.record('compute', marks[3]);
    }
  };
  chain();
  await b.synchronize();
  const per = [];
  for (let t = 0; t < trials; t++) {
    b.record('compute', e0);
    chain();
    b.record('compute', e1);
    await b.synchronize();
    per.push((b.elapsedMs(e0, e1) * 1000) / layers);
  }
  return median(per);
}

const gemv = await benchGemv(b, 'layer', rows, cols, 10);
const head = await benchGemv(b, 'lm-head', headRows, cols, 10);
console.log(`GEMV alone: layer ${gemv.us.toFixed(2)} us, LM head ${head.us.toFixed(2)} us`);
const results = {};
for (const tokens of contexts) {
  const blocks = Math.ceil(tokens / g.blockTokens);
  const fp16 = Array.from({ length: blocks }, () => 'fp16');
  const shared = [buildDeviceCache(b, g, fp16)];
  const perLayer = Array.from({ length: layers }, (_, l) => buildDeviceCache(b, g, fp16, 7 + l));
  for (let r = 0; r < rounds; r++) {
    for (const [wName, w] of [['one', [one]], ['run', run]]) {
      for (const [kName, k] of [['one', shared], ['per-layer', perLayer]]) {
        const us = await chainUs(w, k, tokens);
        (results[`${tokens} weights=${wName} kv=${kName}`] ??= []).push(us);
      }
    }
  }
  for (const c of [...shared, ...perLayer]) c.free();
}
for (const [k, v] of Object.entries(results)) {
  const us = median(v);
  console.log(`chain ${k}: ${v.map((x) => x.toFixed(2)).join(' ')} us/layer -> step ${((layers * us + head.us) / 1000).toFixed(3)} ms (${layers} x chain + LM head alone)`);
}
const gate = await ComputeGate.open(b);
const mixed = mixedAtInt8Bits({ kvHeads: m.kv_heads, blockTokens: g.blockTokens, headDim: m.head_dim, groupSize: g.groupSize });
for (const tokens of contexts) {
  const line = [];
  for (const p of ['fp16', 'int2', 'int4', 'mixed', 'mixed_interleaved']) {
    const r = await benchAttention(b, { label: p, contextTokens: tokens, qHeads: m.q_heads, kvHeads: m.kv_heads, headDim: m.head_dim, blockTokens: g.blockTokens, groupSize: g.groupSize, precisionOf: tableOf(p, mixed.precisionOf), gate }, 5);
    line.push(`${p} ${r.us.toFixed(2)}`);
  }
  console.log(`attention alone at ${tokens}: ${line.join(', ')} us`);
}
gate.free();
for (const e of [...marks, e0, e1]) b.destroyEvent(e);
for (const r of [one, ...run, x, y, q, out]) b.free(r);
b.close();

const dir = mkdtempSync(join(tmpdir(), 'chain-ab-'));
const trace = join(dir, 'broad-8k.kvt');
generateTrace(trace, { preset: 'broad', model: m.name, layers: m.layers, prompt_tokens: 8192, steps: 16, seed: 1 }, { overwrite: true });
for (const [policy, budget] of [['h2o', '10%'], ['full', '100%'], ['h2o', '10%'], ['full', '100%']]) {
  const r = await hilRun({ trace, policy, model: MODEL, hardware: 'h100-pcie5', hbm_budget: budget, group_size: g.groupSize }, { backend: kind, nvmeDir: dir });
  const ms = r.result.steps.slice(1).map((s) => s.latency_ms);
  console.log(`hil run ${policy} ${budget}: median step ${median(ms).toFixed(3)} ms (steps 2-16: ${Math.min(...ms).toFixed(3)}..${Math.max(...ms).toFixed(3)})`);
}
rmSync(dir, { recursive: true, force: true });
