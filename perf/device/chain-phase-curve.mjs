// On the GPU machine (plain node, compiled JS): the calibration's FP16 attention-in-situ points for MODELS
// (default llama-2-7b,llama-3-8b) at CONTEXTS (default the standing grid's calibration contexts from 2048
// tokens on), each timed at the context itself and as the mean over the contexts CHAIN_PHASE_BLOCKS around
// it (hil/calibrate/measure.ts measureChain with phases). Prints one JSON line per model:
// { model, points: [{ tokens, at_context_us, mean_us }] } (chain time per layer, the GEMV included).
//   node perf/device/chain-phase-curve.mjs DIST     (KVTIER_HIL_ADDON names the addon)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
if (!dist) throw new Error('usage: node perf/device/chain-phase-curve.mjs DIST');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { CHAIN_PHASE_BLOCKS, CHAIN_WARM_MS, measureChain } = await load('hil/calibrate/measure.js');
const { loadModel } = await load('sim/models/load-model.js');
const contexts = (process.env.CONTEXTS ?? '2048,3072,4096,6144,10240,12288,16384,20480,24576,40960,49152,65536,98304,163840').split(',').map(Number);
if (!contexts.every((c) => Number.isInteger(c) && c >= 16)) throw new Error(`CONTEXTS must be integers >= 16 separated by commas (got ${process.env.CONTEXTS})`);
const b = openBackend('cuda');
console.error(`device ${b.info().name}; phases ${CHAIN_PHASE_BLOCKS.join(', ')} blocks`);
for (const name of (process.env.MODELS ?? 'llama-2-7b,llama-3-8b').split(',')) {
  const model = loadModel(name);
  const o = { model, blockTokens: 16, groupSize: Math.min(128, model.head_dim), quick: true, fileDir: '/tmp' };
  const rows = Math.max(8, Math.round(model.weight_bytes_per_layer / 2 / model.hidden));
  const pts = await measureChain(b, o, contexts, rows, model.hidden, 0, 5, { warmMs: CHAIN_WARM_MS, phases: CHAIN_PHASE_BLOCKS });
  const out = pts.map((p) => ({ tokens: p.tokens, at_context_us: p.us_at_context ?? p.chain_us_per_layer, mean_us: p.chain_us_per_layer }));
  for (const p of out) console.error(`${name} ${String(p.tokens).padStart(6)}: at the context ${p.at_context_us.toFixed(2)} us, mean around it ${p.mean_us.toFixed(2)} (${(p.mean_us - p.at_context_us >= 0 ? '+' : '') + (p.mean_us - p.at_context_us).toFixed(2)})`);
  console.log(JSON.stringify({ model: name, device: b.info().name, points: out }));
}
b.close();
