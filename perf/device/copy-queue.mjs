// On the GPU machine (plain node, compiled JS): how many copies can the host queue on a stream that is
// not running them yet, before a copy's issue waits for the GPU? The memory stream waits on an event
// recorded after GATE GEMVs on the compute stream (about GATE x 45 us), then the host issues N single
// 64 KiB copies (D2H or H2D, slots in turn over a 256 MiB pinned pool), reading its clock after each.
// The first issue that returns more than 100 us after the one before waited: the ops before it are the
// queue's room. The same with GEMVs (small, 64 x 256) on the compute stream behind the gate (the
// launch queue of hil/bench/queue-depth-bench.ts), and with copies behind one large (1 GiB) copy on
// the memory stream. And with one-block conversions (an INT8 block dequantized to FP16 and an FP16 block
// quantized to INT2, in turn, as a re-quantization issues them; Llama-3-8B's 16-token block, 32,768 values,
// groups of 128) on the memory stream behind the gate: does a conversion take the queue's room a copy takes?
// ROUNDS rounds, cases alternated.
//   node perf/device/copy-queue.mjs DIST     (KVTIER_HIL_ADDON names the addon)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
if (!dist) throw new Error('usage: node perf/device/copy-queue.mjs DIST');
const { openBackend } = await import(pathToFileURL(resolve(dist, 'hil/backend.js')).href);
const rounds = Number(process.env.ROUNDS ?? 3);
const N = Number(process.env.OPS ?? 3000);
const GATE = Number(process.env.GATE ?? 300);
for (const [k, v] of [['ROUNDS', rounds], ['OPS', N], ['GATE', GATE]]) if (!(Number.isInteger(v) && v >= 1)) throw new Error(`${k} must be an integer >= 1 (got ${process.env[k]})`);
const b = openBackend('cuda');
const BLOCK = 65536;
const MiB = 1 << 20;
const POOL = 256 * MiB;
const host = b.alloc('pinned', 1024 * MiB);
const dev = b.alloc('device', 1024 * MiB);
const gw = b.alloc('device', 16384 * 4096 * 2);
const gx = b.alloc('device', 4096 * 4);
const gy = b.alloc('device', 16384 * 4);
const sw = b.alloc('device', 64 * 256 * 2);
const sx = b.alloc('device', 256 * 4);
const sy = b.alloc('device', 64 * 4);
const gate = { w: gw, x: gx, y: gy, rows: 16384, cols: 4096 };
// one block's conversion: 32,768 values in groups of 128; the FP16 block, its INT8 and INT2 codes with their metadata
const CN = 32768;
const cf = b.alloc('device', CN * 2);
const c8 = b.alloc('device', 2 * CN);
const c2 = b.alloc('device', 2 * CN);
const small = { w: sw, x: sx, y: sy, rows: 64, cols: 256 };
const ev = b.createEvent();
const at = new Float64Array(N);

function issue(kind, i) {
  const off = (i * BLOCK) % POOL;
  if (kind === 'd2h') b.copy('memory', host, off, dev, off, BLOCK);
  else if (kind === 'h2d') b.copy('memory', dev, off, host, off, BLOCK);
  else if (kind === 'convert') {
    if (i % 2 === 0) b.dequantize('memory', { codes: c8, meta: c8, metaOffset: CN, dst: cf, n: CN, bits: 8, groupSize: 128 });
    else b.quantize('memory', { src: cf, codes: c2, meta: c2, metaOffset: CN / 4, n: CN, bits: 2, groupSize: 128 });
  } else b.gemv('compute', small);
}

/** index of the first issue that waited (> 100 us after the one before), -1 if none; host us per op before it */
function firstWait() {
  for (let i = 1; i < N; i++) if (at[i] - at[i - 1] > 0.1) return i;
  return -1;
}

const cases = [
  { label: 'd2h copies, memory stream waiting on a gate', kind: 'd2h', behind: 'gate' },
  { label: 'h2d copies, memory stream waiting on a gate', kind: 'h2d', behind: 'gate' },
  { label: 'gemvs, compute stream behind the gate', kind: 'gemv', behind: 'gate' },
  { label: 'conversions, memory stream waiting on a gate', kind: 'convert', behind: 'gate' },
  { label: 'd2h copies behind a 1 GiB copy', kind: 'd2h', behind: 'copy' },
  { label: 'h2d copies behind a 1 GiB copy', kind: 'h2d', behind: 'copy' },
];
console.log(`device ${b.info().name}; ${N} ops per trial, gate of ${GATE} GEMVs (16384 x 4096), ${rounds} rounds`);
for (let r = 0; r < rounds; r++) {
  for (const c of cases) {
    await b.synchronize();
    const g0 = performance.now();
    if (c.behind === 'gate') {
      b.gemv('compute', gate, GATE);
      b.record('compute', ev);
      if (c.kind !== 'gemv') b.waitEvent('memory', ev);
    } else b.copy('memory', dev, 0, host, 0, 1024 * MiB);
    const t0 = performance.now();
    for (let i = 0; i < N; i++) {
      issue(c.kind, i);
      at[i] = performance.now();
    }
    await b.synchronize();
    const t1 = performance.now();
    const w = firstWait();
    const before = w > 0 ? ((at[w - 1] - t0) * 1000) / w : ((at[N - 1] - t0) * 1000) / N;
    console.log(
      `round ${r} ${c.label.padEnd(46)} first wait at op ${w} (waited ${w > 0 ? ((at[w] - at[w - 1]) * 1000).toFixed(0) : '-'} us); host ${before.toFixed(2)} us per op before it;` +
        ` gate/blocker issue ${((t0 - g0) * 1000).toFixed(0)} us; all ops issued after ${((at[N - 1] - t0)).toFixed(2)} ms; drained ${(t1 - t0).toFixed(2)} ms`,
    );
  }
}
b.destroyEvent(ev);
for (const x of [host, dev, gw, gx, gy, sw, sx, sy, cf, c8, c2]) b.free(x);
b.close();
