// On the GPU machine (plain node, compiled JS): the attention kernel's time per layer against context in
// fine steps, as the calibration times its in-situ points (hil/calibrate/measure.ts measureChain: chains of
// layers of attention + the layer's GEMV, FP16 blocks), for MODELS (default llama-2-7b,llama-3-8b) at
// contexts FROM..TO every STEP tokens (default 1024..4608 every 64), with the dispatch's plan at each
// context: splits, chunks per warp, the last split's chunks per warp, and the tail wave's chunks per warp
// by the split rule read from the plan (sim/attention-waves.ts; slots = resident blocks x SMs). Shows how
// the kernel's time steps with its split of the context, and what the tail wave costs against its chunks
// per warp and the last split's (hil/calibrate/fit-tail-wave.ts prices it as us_per_chunk x chunks).
// Two passes, the contexts in opposite orders, so that a drift over the run shows. With $OUT set, one
// JSON line per context in $OUT/attn-context-steps.jsonl.
//   node perf/device/attn-context-steps.mjs DIST     (KVTIER_HIL_ADDON names the addon; BACKEND=host runs it
// without a GPU, as a check of the script: the host's plans have no tail wave)
import { appendFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
if (!dist) throw new Error('usage: node perf/device/attn-context-steps.mjs DIST');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { measureChain } = await load('hil/calibrate/measure.js');
const { tailChunks } = await load('sim/attention-waves.js');
const { loadModel } = await load('sim/models/load-model.js');
const int = (k, d) => {
  const v = Number(process.env[k] ?? d);
  if (!(Number.isInteger(v) && v >= 16)) throw new Error(`${k} must be an integer >= 16 (got ${process.env[k]})`);
  return v;
};
const FROM = int('FROM', 1024);
const TO = int('TO', 4608);
const STEP = int('STEP', 64);
if (TO < FROM) throw new Error(`TO (${TO}) must be at least FROM (${FROM})`);
const models = (process.env.MODELS ?? 'llama-2-7b,llama-3-8b').split(',');
const out = process.env.OUT ? join(process.env.OUT, 'attn-context-steps.jsonl') : null;
const contexts = [];
for (let t = FROM; t <= TO; t += STEP) contexts.push(t);
const b = openBackend(process.env.BACKEND ?? 'cuda');
const info = b.info();
console.log(`device ${info.name}, ${info.multiprocessors} SMs; contexts ${FROM}..${TO} every ${STEP}; us per layer: chain (attention + GEMV) in each pass, and the attention beyond the chain without it`);
for (const name of models) {
  const model = loadModel(name);
  const o = { model, blockTokens: 16, groupSize: Math.min(128, model.head_dim), quick: true, fileDir: '/tmp' };
  const rows = Math.max(8, Math.round(model.weight_bytes_per_layer / 2 / model.hidden));
  const a = await measureChain(b, o, contexts, rows, model.hidden, 7, { warmMs: 200 });
  const z = await measureChain(b, o, [...contexts].reverse(), rows, model.hidden, 7);
  const zBy = new Map(z.map((p) => [p.tokens, p]));
  console.log(`${name} (kv heads ${model.kv_heads}, q heads ${model.q_heads})`);
  for (const p of a) {
    const q = zBy.get(p.tokens);
    const plan = b.attentionPlan({ qHeads: model.q_heads, kvHeads: model.kv_heads, headDim: model.head_dim, blockTokens: 16, groupSize: o.groupSize, contextTokens: p.tokens, uniformPrecision: 'fp16' });
    const chunks = Math.ceil(p.tokens / 16);
    const wph = plan.headWarps ? 1 : Math.max(1, plan.warpsPerBlock);
    const lastChunks = chunks - (plan.splits - 1) * wph * plan.chunksPerWarp;
    const rule = { slots: plan.residentBlocks * info.multiprocessors, blocks_per_split: plan.grid[1], warps_per_head: wph, chunk_tokens: 16 };
    // (no SM count, as on the host backend: no slots to pass)
    const tail = rule.slots > 0 ? tailChunks(p.tokens, rule) : 0;
    const row = { device: info.name, model: name, tokens: p.tokens, chunks, kernel: plan.kernel, splits: plan.splits, chunks_per_warp: plan.chunksPerWarp, last_chunks_per_warp: Math.ceil(lastChunks / wph), blocks: plan.grid[0] * plan.grid[1], slots: rule.slots, tail_chunks: tail, chain_us: [p.chain_us_per_layer, q.chain_us_per_layer], us: [p.us, q.us] };
    if (out) appendFileSync(out, JSON.stringify(row) + '\n');
    console.log(`  ${String(p.tokens).padStart(6)} tokens: ${String(plan.splits).padStart(2)} splits x ${String(plan.chunksPerWarp).padStart(2)} chunks/warp (last ${row.last_chunks_per_warp}), ${row.blocks} blocks of ${rule.slots}, tail ${tail}: chain ${p.chain_us_per_layer.toFixed(2)} / ${q.chain_us_per_layer.toFixed(2)} us, attention ${p.us.toFixed(2)} / ${q.us.toFixed(2)} us`);
  }
}
b.close();
