// On the GPU machine (plain node, compiled JS): how far does the copy engine's reach over pinned host
// memory go, and what does a copy past it cost? Single 64 KiB blocks copied D2H and H2D on the memory
// stream, GPU otherwise idle. Patterns (host offsets of the copies, cycled):
//   consecutive        block after block
//   in-region          random slots inside one 2 MiB region
//   cycle N x S        one random slot in each of N regions S bytes apart, regions visited in turn
//   layers k of L      the executor's layout (block (l, b) at slot l * M + b, M = 528): k random blocks
//                      of layer l, then of layer l + 1, ... over L layers, as a selection per layer makes
// Each trial first issues one pass over the pattern's regions untimed, then COPIES copies between two
// events. Cases alternate within each of ROUNDS rounds; the median us per copy is printed per case.
//   node perf/device/reach-ab.mjs DIST     (KVTIER_HIL_ADDON names the addon)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
if (!dist) throw new Error('usage: node perf/device/reach-ab.mjs DIST');
const { openBackend } = await import(pathToFileURL(resolve(dist, 'hil/backend.js')).href);
const rounds = Number(process.env.ROUNDS ?? 5);
const copies = Number(process.env.COPIES ?? 2048);
if (!(Number.isInteger(rounds) && rounds >= 1)) throw new Error(`ROUNDS must be an integer >= 1 (got ${process.env.ROUNDS})`);
if (!(Number.isInteger(copies) && copies >= 16)) throw new Error(`COPIES must be an integer >= 16 (got ${process.env.COPIES})`);
const b = openBackend('cuda');
const BLOCK = 65536;
const KiB = 1024;
const MiB = 1 << 20;
const POOL = 4096 * MiB;
const host = b.alloc('pinned', POOL);
const dev = b.alloc('device', copies * BLOCK);
const e0 = b.createEvent();
const e1 = b.createEvent();
const med = (xs) => xs.slice().sort((x, y) => x - y)[Math.floor(xs.length / 2)];
let seed = 12345;
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
const slotIn = (bytes) => Math.floor(rand() * Math.max(1, bytes / BLOCK)) * BLOCK;

/** a case: `warm` untimed offsets then `copies` timed ones */
const cases = [];
function add(label, warm, gen) {
  const all = Array.from({ length: warm + copies }, (_, i) => gen(i));
  for (const dir of ['d2h', 'h2d']) cases.push({ dir, label, warm, offsets: all });
}
add('consecutive', 64, (i) => (i * BLOCK) % POOL);
add('in-region 2 MiB', 64, () => slotIn(2 * MiB));
for (const [n, s] of [
  [16, 2 * MiB], [64, 2 * MiB], [128, 2 * MiB], [192, 2 * MiB], [256, 2 * MiB], [320, 2 * MiB], [384, 2 * MiB],
  [512, 2 * MiB], [1024, 2 * MiB], [2048, 2 * MiB],
  [512, 1 * MiB], [1024, 1 * MiB], [2048, 1 * MiB],
  [128, 4 * MiB], [256, 4 * MiB], [512, 4 * MiB],
  [512, 512 * KiB], [2048, 512 * KiB],
  [2048, 64 * KiB * 2],
]) add(`cycle ${n} x ${s / KiB} KiB`, n, (i) => (i % n) * s + slotIn(Math.min(s, 2 * MiB)));
const M = 528;
for (const [k, L] of [[8, 32], [24, 32], [64, 32], [24, 8], [24, 64], [24, 120]]) {
  add(`layers ${k} of ${L}`, k * L, (i) => {
    const l = Math.floor(i / k) % L;
    return (l * M + Math.floor(rand() * M)) * BLOCK;
  });
}
for (const c of cases) if (Math.max(...c.offsets) + BLOCK > POOL) throw new Error(`${c.label}: past the pool`);

console.log(`device ${b.info().name}; ${copies} timed copies of ${BLOCK} B per trial, ${rounds} rounds`);
const res = new Map(cases.map((c) => [c, []]));
for (let off = 0; off < POOL; off += 64 * MiB) b.copy('memory', dev, 0, host, off, BLOCK);
await b.synchronize();
for (let r = 0; r < rounds; r++) {
  for (const c of cases) {
    await b.synchronize();
    const copy = (i, j) => {
      if (c.dir === 'd2h') b.copy('memory', host, c.offsets[i], dev, j * BLOCK, BLOCK);
      else b.copy('memory', dev, j * BLOCK, host, c.offsets[i], BLOCK);
    };
    for (let i = 0; i < c.warm; i++) copy(i, i % copies);
    b.record('memory', e0);
    for (let i = 0; i < copies; i++) copy(c.warm + i, i);
    b.record('memory', e1);
    await b.synchronize();
    res.get(c).push((b.elapsedMs(e0, e1) * 1000) / copies);
  }
}
for (const c of cases) {
  const r = res.get(c);
  console.log(`${c.dir} ${c.label.padEnd(24)} ${med(r).toFixed(3)} us per copy (rounds ${r.map((x) => x.toFixed(2)).join(' ')})`);
}
b.destroyEvent(e0);
b.destroyEvent(e1);
b.free(host);
b.free(dev);
b.close();
