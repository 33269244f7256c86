// On the GPU machine (plain node, compiled JS): does the copy engine go slower while the host waits for
// room in the stream's copy queue and issues one copy as each ends (the executor's state when its memory
// stream bounds a step)? Single 64 KiB D2H (and H2D) copies issued back to back on the memory stream, no
// gate: N = 900 copies (the host never waits: the queue holds about 1,020) against N = 3,000 (past the
// first ~1,020 the host issues each copy as one ends). The GPU's time per copy is read between events
// recorded after copy 100 and before the last 100 (inside the blocked stretch for N = 3,000). With
// BESIDE=1, GEMVs of a Llama-3-8B layer (53248 x 4096) are queued on the compute stream first, so that
// the copies run beside them. ROUNDS rounds, cases alternated; medians.
//   node perf/device/ring-pace.mjs DIST     (KVTIER_HIL_ADDON names the addon)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
if (!dist) throw new Error('usage: node perf/device/ring-pace.mjs DIST');
const { openBackend } = await import(pathToFileURL(resolve(dist, 'hil/backend.js')).href);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const BESIDE = process.env.BESIDE === '1';
if (!(Number.isInteger(ROUNDS) && ROUNDS >= 1)) throw new Error(`ROUNDS must be an integer >= 1 (got ${process.env.ROUNDS})`);
const b = openBackend('cuda');
const BLOCK = 65536;
const MAXN = 3000;
const host = b.alloc('pinned', MAXN * BLOCK * 8);
const dev = b.alloc('device', MAXN * BLOCK);
const rows = 53248;
const gemv = BESIDE ? { w: b.alloc('device', rows * 4096 * 2), x: b.alloc('device', 4096 * 4), y: b.alloc('device', rows * 4), rows, cols: 4096 } : null;
const [e0, e1] = [b.createEvent(), b.createEvent()];
let seed = 77;
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
// host slots: about one in six, ascending (a selection's sorted list)
const slots = [];
for (let s = 0; slots.length < MAXN; s++) if (rand() < 1 / 6) slots.push(s);
const cases = [];
for (const dir of ['d2h', 'h2d']) for (const n of [900, 3000]) cases.push({ dir, n, us: [], hostUs: [] });
const med = (xs) => xs.slice().sort((x, y) => x - y)[Math.floor(xs.length / 2)];
console.log(`device ${b.info().name}; ${BESIDE ? 'beside GEMVs of 53248 x 4096' : 'GPU otherwise idle'}; ${ROUNDS} rounds`);
for (let r = 0; r < ROUNDS; r++) {
  for (const c of cases) {
    await b.synchronize();
    // enough GEMVs to cover the copies (~7.5 us each beside them, ~150 us per GEMV)
    if (gemv) b.gemv('compute', gemv, Math.ceil((c.n * 8) / 150) + 2);
    const t0 = performance.now();
    for (let i = 0; i < c.n; i++) {
      if (i === 100) b.record('memory', e0);
      if (i === c.n - 100) b.record('memory', e1);
      if (c.dir === 'd2h') b.copy('memory', host, slots[i] * BLOCK, dev, i * BLOCK, BLOCK);
      else b.copy('memory', dev, i * BLOCK, host, slots[i] * BLOCK, BLOCK);
    }
    const t1 = performance.now();
    await b.synchronize();
    c.us.push((b.elapsedMs(e0, e1) * 1000) / (c.n - 200));
    c.hostUs.push(((t1 - t0) * 1000) / c.n);
  }
}
for (const c of cases) console.log(`${c.dir} N=${String(c.n).padEnd(5)} GPU ${med(c.us).toFixed(3)} us per copy (rounds ${c.us.map((x) => x.toFixed(2)).join(' ')}); host ${med(c.hostUs).toFixed(2)} us per copy issued`);
