// On the GPU machine (plain node, compiled JS): the attention kernel's time per layer against context in
// fine steps, as the calibration times its in-situ points (hil/calibrate/measure.ts measureChain: chains of
// layers of attention + the layer's GEMV, FP16 blocks), for MODELS (default llama-2-7b,llama-3-8b) at
// contexts FROM..TO every STEP tokens (default 2048..4608 every 128). Shows whether the kernel's time
// between two calibration points is the straight line the simulator draws between them or steps with the
// kernel's split of the context.
//   node perf/device/attn-context-steps.mjs DIST     (KVTIER_HIL_ADDON names the addon)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
if (!dist) throw new Error('usage: node perf/device/attn-context-steps.mjs DIST');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { measureChain } = await load('hil/calibrate/measure.js');
const { loadModel } = await load('sim/models/load-model.js');
const int = (k, d) => {
  const v = Number(process.env[k] ?? d);
  if (!(Number.isInteger(v) && v >= 16)) throw new Error(`${k} must be an integer >= 16 (got ${process.env[k]})`);
  return v;
};
const FROM = int('FROM', 2048);
const TO = int('TO', 4608);
const STEP = int('STEP', 128);
if (TO < FROM) throw new Error(`TO (${TO}) must be at least FROM (${FROM})`);
const models = (process.env.MODELS ?? 'llama-2-7b,llama-3-8b').split(',');
const contexts = [];
for (let t = FROM; t <= TO; t += STEP) contexts.push(t);
const b = openBackend('cuda');
console.log(`device ${b.info().name}; contexts ${FROM}..${TO} every ${STEP}; us per layer: chain (attention + GEMV) and chain less the first point's`);
for (const name of models) {
  const model = loadModel(name);
  const o = { model, blockTokens: 16, groupSize: Math.min(128, model.head_dim), quick: true, fileDir: '/tmp' };
  const rows = Math.max(8, Math.round(model.weight_bytes_per_layer / 2 / model.hidden));
  // two passes, contexts in opposite orders, so a drift over the run shows
  const a = await measureChain(b, o, contexts, rows, model.hidden, 0, 7, { warmMs: 200 });
  const z = await measureChain(b, o, [...contexts].reverse(), rows, model.hidden, 0, 7);
  const zBy = new Map(z.map((p) => [p.tokens, p.chain_us_per_layer]));
  const base = a[0].chain_us_per_layer;
  console.log(`${name} (kv heads ${model.kv_heads}, q heads ${model.q_heads})`);
  for (const p of a) console.log(`  ${String(p.tokens).padStart(6)} tokens (${Math.ceil(p.tokens / 16)} blocks): ${p.chain_us_per_layer.toFixed(2)} / ${zBy.get(p.tokens).toFixed(2)} us, +${(p.chain_us_per_layer - base).toFixed(2)}`);
}
b.close();
