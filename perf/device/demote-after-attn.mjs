// On the GPU machine (plain node, compiled JS): do single-block D2H copies beside a layer's GEMV go slower
// when an attention kernel has just read their source blocks? Llama-3-8B shapes: per layer a cache of
// BLOCKS FP16 blocks of 64 KiB in HBM (its own allocation), the paged attention over all of them, then
// the layer's GEMV (53248 x 4096 FP16, 436 MB); COPIES of the layer's blocks (random, ascending) copied
// D2H to their host slots on the memory stream, queued to start when the attention has ended, so that they
// run beside the GEMV. LAYERS layers per trial, all queued behind a gate of GEMVs (hil/bench/gate.ts).
// Cases:
//   read       the copies' blocks are the ones the attention just read (Quest's demotions)
//   unread     the copies' blocks are of another allocation the attention did not read
//   no-attn    no attention: the copies start with the GEMV
//   idle       the copies alone (no attention, no GEMV)
// us per copy = the memory stream's time from the first copy of a layer to its last, summed over layers,
// over the copies; the median over ROUNDS rounds (cases alternated).
//   node perf/device/demote-after-attn.mjs DIST     (KVTIER_HIL_ADDON names the addon)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
if (!dist) throw new Error('usage: node perf/device/demote-after-attn.mjs DIST');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { ComputeGate } = await load('hil/bench/gate.js');
const { buildDeviceCache } = await load('hil/bench/device-cache.js');
const env = (k, d) => {
  const v = Number(process.env[k] ?? d);
  if (!(Number.isInteger(v) && v >= 1)) throw new Error(`${k} must be an integer >= 1 (got ${process.env[k]})`);
  return v;
};
const ROUNDS = env('ROUNDS', 5);
const BLOCKS = env('BLOCKS', 205);
const COPIES = env('COPIES', 25);
const LAYERS = env('LAYERS', 8);
if (COPIES > BLOCKS) throw new Error(`COPIES (${COPIES}) must be at most BLOCKS (${BLOCKS})`);
const b = openBackend('cuda');
const g = { kvHeads: 8, blockTokens: 16, headDim: 128, groupSize: 128 };
const BLOCK = 65536;
const caches = Array.from({ length: LAYERS }, (_, l) => buildDeviceCache(b, g, Array(BLOCKS).fill('fp16'), 7 + l));
const other = buildDeviceCache(b, g, Array(BLOCKS).fill('fp16'), 99);
const host = b.alloc('pinned', LAYERS * BLOCKS * BLOCK);
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
const picks = Array.from({ length: LAYERS }, () => {
  const s = new Set();
  while (s.size < COPIES) s.add(Math.floor(rand() * BLOCKS));
  return [...s].sort((x, y) => x - y);
});
const attnArgs = (c) => ({ arena: c.arena, arenaBytes: c.arenaBytes, table: c.table, q, out, qHeads: 32, kvHeads: 8, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: BLOCKS * 16 });

const cases = ['read', 'unread', 'no-attn', 'idle'];
const res = Object.fromEntries(cases.map((k) => [k, []]));
const dropped = Object.fromEntries(cases.map((k) => [k, 0]));
console.log(`device ${b.info().name}; ${LAYERS} layers of ${BLOCKS} FP16 blocks, ${COPIES} D2H copies a layer, GEMV ${rows} x 4096, ${ROUNDS} rounds`);
for (let r = 0; r < ROUNDS + 1; r++) {
  for (const k of cases) {
    await b.synchronize();
    gate.hold(k);
    b.waitEvent('memory', gate.start);
    for (let l = 0; l < LAYERS; l++) {
      const src = k === 'unread' ? other : caches[l];
      if (k === 'read' || k === 'unread') b.attention('compute', attnArgs(caches[l]));
      b.record('compute', evAttn[l]);
      if (k !== 'idle') b.gemv('compute', gemv);
      b.waitEvent('memory', evAttn[l]);
      b.record('memory', c0[l]);
      for (const blk of picks[l]) b.copy('memory', host, (l * BLOCKS + blk) * BLOCK, src.arena, src.entries[blk].offset, BLOCK);
      b.record('memory', c1[l]);
    }
    const t = await gate.release();
    if (r === 0) continue; // the first round sizes the gate
    if (!t.held) {
      dropped[k]++;
      continue;
    }
    let us = 0;
    for (let l = 0; l < LAYERS; l++) us += b.elapsedMs(c0[l], c1[l]) * 1000;
    res[k].push(us / (LAYERS * COPIES));
  }
}
const med = (xs) => (xs.length ? xs.slice().sort((x, y) => x - y)[Math.floor(xs.length / 2)] : NaN);
for (const k of cases) console.log(`${k.padEnd(8)} ${med(res[k]).toFixed(3)} us per copy (rounds ${res[k].map((x) => x.toFixed(2)).join(' ')}${dropped[k] ? `; ${dropped[k]} not held` : ''})`);
