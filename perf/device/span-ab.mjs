// On the GPU machine (plain node, compiled JS): does a small copy's time depend on how far apart its
// pinned host slots lie? Single 64 KiB blocks copied D2H and H2D on the memory stream, GPU otherwise
// idle, COPIES per trial, between two events: host slots in order within a span (consecutive), or at
// random slot offsets within a span of 32 MiB, 256 MiB, 1 GiB or 4 GiB (the executor's DRAM pool spans
// the run's whole host KV: about 1 GiB for Llama-3-8B at 8k). Spans and patterns alternate within each
// of ROUNDS rounds; the median us per copy is printed per case, with the host's issue time per copy.
//   node perf/device/span-ab.mjs DIST     (KVTIER_HIL_ADDON names the addon)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
if (!dist) throw new Error('usage: node perf/device/span-ab.mjs DIST');
const { openBackend } = await import(pathToFileURL(resolve(dist, 'hil/backend.js')).href);
const rounds = Number(process.env.ROUNDS ?? 5);
const copies = Number(process.env.COPIES ?? 2048);
if (!(Number.isInteger(rounds) && rounds >= 1)) throw new Error(`ROUNDS must be an integer >= 1 (got ${process.env.ROUNDS})`);
if (!(Number.isInteger(copies) && copies >= 16)) throw new Error(`COPIES must be an integer >= 16 (got ${process.env.COPIES})`);
const b = openBackend('cuda');
const BLOCK = 65536;
const MiB = 1 << 20;
const spans = [32 * MiB, 256 * MiB, 1024 * MiB, 4096 * MiB];
const host = b.alloc('pinned', spans[spans.length - 1]);
const dev = b.alloc('device', copies * BLOCK);
const e0 = b.createEvent();
const e1 = b.createEvent();
const med = (xs) => xs.slice().sort((x, y) => x - y)[Math.floor(xs.length / 2)];
// a fixed pseudo-random sequence (the same slots every round)
let seed = 12345;
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
const cases = [];
for (const dir of ['d2h', 'h2d']) {
  cases.push({ dir, label: 'consecutive', offsets: Array.from({ length: copies }, (_, i) => i * BLOCK) });
  for (const span of spans) {
    const slots = span / BLOCK;
    cases.push({ dir, label: `random in ${span / MiB} MiB`, offsets: Array.from({ length: copies }, () => Math.floor(rand() * slots) * BLOCK) });
  }
}
console.log(`device ${b.info().name}; ${copies} copies of ${BLOCK} B per trial, ${rounds} rounds`);
const res = new Map(cases.map((c) => [c, { gpu: [], host: [] }]));
// touch the pool once, one block per 64 MiB (first-use costs out of the way)
for (let off = 0; off < spans[spans.length - 1]; off += 64 * MiB) b.copy('memory', dev, 0, host, off, BLOCK);
await b.synchronize();
for (let r = 0; r < rounds; r++) {
  for (const c of cases) {
    await b.synchronize();
    const t0 = performance.now();
    b.record('memory', e0);
    for (let i = 0; i < copies; i++) {
      if (c.dir === 'd2h') b.copy('memory', host, c.offsets[i], dev, i * BLOCK, BLOCK);
      else b.copy('memory', dev, i * BLOCK, host, c.offsets[i], BLOCK);
    }
    b.record('memory', e1);
    const hostUs = ((performance.now() - t0) * 1000) / copies;
    await b.synchronize();
    res.get(c).gpu.push((b.elapsedMs(e0, e1) * 1000) / copies);
    res.get(c).host.push(hostUs);
  }
}
for (const c of cases) {
  const r = res.get(c);
  console.log(`${c.dir} ${c.label.padEnd(22)} ${med(r.gpu).toFixed(3)} us per copy (rounds ${r.gpu.map((x) => x.toFixed(2)).join(' ')}), host ${med(r.host).toFixed(2)} us per copy`);
}
b.destroyEvent(e0);
b.destroyEvent(e1);
b.free(host);
b.free(dev);
b.close();
