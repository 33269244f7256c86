// On the GPU machine (plain node, compiled JS): does the span of host memory that single-block copies
// reach change their pace beside a layer's compute? Llama-3-8B shapes, LAYERS layers (default 32, as the
// model): per layer a cache of BLOCKS FP16 blocks of 64 KiB in HBM, the paged attention over them, then
// the layer's GEMV (53248 x 4096 FP16); COPIES of the layer's blocks (random, ascending) copied on the
// memory stream once the attention has ended (so beside the GEMV), D2H to their host slots or H2D from
// them. Host slot of block b of layer l: (l * M + b) x 64 KiB, as the executor's host tiers place it (M:
// the tier's blocks per layer), the blocks drawn from 0 .. M - 1. Spans: M = 48 (about the calibration's
// layout batches: their copies reach the first ~100 of 384 slots of 8 layers), 512 (an 8k context: 1 GiB
// for 32 layers), 2048 (32k: 4 GiB). Each span also clustered: the layer's slots drawn from a window of
// 2 x COPIES consecutive slots at a random place in 0 .. M - 1 (the span without the spread). Conditions: beside (attention + GEMV per layer) and idle (copies alone).
// us per copy = the memory stream's time from a layer's first copy to its last, summed over layers, over
// the copies; the median over ROUNDS rounds, every case in turn each round, all queued behind a gate.
//   node perf/device/host-span.mjs DIST     (KVTIER_HIL_ADDON names the addon)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
if (!dist) throw new Error('usage: node perf/device/host-span.mjs DIST');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { ComputeGate } = await load('hil/bench/gate.js');
const { buildDeviceCache } = await load('hil/bench/device-cache.js');
const env = (k, d) => {
  const v = Number(process.env[k] ?? d);
  if (!(Number.isInteger(v) && v >= 1)) throw new Error(`${k} must be an integer >= 1 (got ${process.env[k]})`);
  return v;
};
const ROUNDS = env('ROUNDS', 7);
const BLOCKS = env('BLOCKS', 205);
const COPIES = env('COPIES', 25);
const LAYERS = env('LAYERS', 32);
const SPANS = (process.env.SPANS ?? '48,512,2048').split(',').map(Number);
if (SPANS.some((m) => !(Number.isInteger(m) && m >= COPIES))) throw new Error(`SPANS must be integers >= COPIES (${COPIES})`);
const b = openBackend('cuda');
const g = { kvHeads: 8, blockTokens: 16, headDim: 128, groupSize: 128 };
const BLOCK = 65536;
const caches = Array.from({ length: LAYERS }, (_, l) => buildDeviceCache(b, g, Array(BLOCKS).fill('fp16'), 7 + l));
const t0 = performance.now();
const host = b.alloc('pinned', LAYERS * Math.max(...SPANS) * BLOCK);
console.log(`pinned ${((LAYERS * Math.max(...SPANS) * BLOCK) / 2 ** 30).toFixed(2)} GiB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const qBytes = 32 * 128 * 4;
const q = b.alloc('device', qBytes);
const out = b.alloc('device', qBytes);
b.write(q, 0, new Float32Array(32 * 128).map((_, i) => Math.sin(i * 0.37)));
const rows = 53248;
const gemv = { w: b.alloc('device', rows * 4096 * 2), x: b.alloc('device', 4096 * 4), y: b.alloc('device', rows * 4), rows, cols: 4096 };
b.write(gemv.x, 0, new Float32Array(4096).map((_, i) => Math.cos(i)));
const gate = await ComputeGate.open(b);
const evAttn = Array.from({ length: LAYERS }, () => b.createEvent());
const c0 = Array.from({ length: LAYERS }, () => b.createEvent());
const c1 = Array.from({ length: LAYERS }, () => b.createEvent());
let seed = 321;
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
const draw = (n) => {
  const s = new Set();
  while (s.size < COPIES) s.add(Math.floor(rand() * n));
  return [...s].sort((x, y) => x - y);
};
// per layer: the cache blocks copied (of BLOCKS) and, per span, their host slots' blocks (of M)
const blocks = Array.from({ length: LAYERS }, () => draw(BLOCKS));
const slots = Object.fromEntries(SPANS.map((m) => [m, Array.from({ length: LAYERS }, () => draw(m))]));
const clustered = Object.fromEntries(
  SPANS.map((m) => [
    m,
    Array.from({ length: LAYERS }, () => {
      const w = Math.min(m, 2 * COPIES);
      const at = Math.floor(rand() * (m - w + 1));
      return draw(w).map((x) => x + at);
    }),
  ]),
);
const attnArgs = (c) => ({ arena: c.arena, arenaBytes: c.arenaBytes, table: c.table, q, out, qHeads: 32, kvHeads: 8, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: BLOCKS * 16 });

const cases = [];
for (const cond of ['beside', 'idle'])
  for (const dir of ['d2h', 'h2d'])
    for (const m of SPANS) for (const near of [false, true]) cases.push({ key: `${cond} ${dir} M=${m}${near ? ' clustered' : ''}`, cond, dir, m, at: near ? clustered[m] : slots[m] });
const res = Object.fromEntries(cases.map((c) => [c.key, []]));
const dropped = Object.fromEntries(cases.map((c) => [c.key, 0]));
console.log(`device ${b.info().name}; ${LAYERS} layers of ${BLOCKS} FP16 blocks, ${COPIES} copies a layer, GEMV ${rows} x 4096, ${ROUNDS} rounds, spans ${SPANS.join(', ')} blocks a layer`);
for (let r = 0; r < ROUNDS + 1; r++) {
  for (const c of cases) {
    await b.synchronize();
    gate.hold(c.key);
    b.waitEvent('memory', gate.start);
    for (let l = 0; l < LAYERS; l++) {
      const cache = caches[l];
      if (c.cond === 'beside') {
        b.attention('compute', attnArgs(cache));
        b.record('compute', evAttn[l]);
        b.gemv('compute', gemv);
        b.waitEvent('memory', evAttn[l]);
      }
      b.record('memory', c0[l]);
      blocks[l].forEach((blk, i) => {
        const h = (l * c.m + c.at[l][i]) * BLOCK;
        if (c.dir === 'd2h') b.copy('memory', host, h, cache.arena, cache.entries[blk].offset, BLOCK);
        else b.copy('memory', cache.arena, cache.entries[blk].offset, host, h, BLOCK);
      });
      b.record('memory', c1[l]);
    }
    const t = await gate.release();
    if (r === 0) continue; // the first round sizes the gate
    if (!t.held) {
      dropped[c.key]++;
      continue;
    }
    let us = 0;
    for (let l = 0; l < LAYERS; l++) us += b.elapsedMs(c0[l], c1[l]) * 1000;
    res[c.key].push(us / (LAYERS * COPIES));
  }
}
const med = (xs) => (xs.length ? xs.slice().sort((x, y) => x - y)[Math.floor(xs.length / 2)] : NaN);
for (const c of cases) console.log(`${c.key.padEnd(30)} ${med(res[c.key]).toFixed(3)} us per copy (rounds ${res[c.key].map((x) => x.toFixed(2)).join(' ')}${dropped[c.key] ? `; ${dropped[c.key]} not held` : ''})`);
b.close();
