// On the GPU machine (plain node, compiled JS): is a single-block copy's cost over scattered host
// slots the host's (issuing it) or the copy engine's (running it)? Single 64 KiB blocks copied D2H
// and H2D on the memory stream, four ways per trial pattern:
//   host      the host's time per copy issued (performance.now around the issue loop)
//   engine    the GPU's time per copy with every copy queued before the GPU reaches the first: the
//             memory stream waits for a gate of GEMVs on the compute stream (hil/bench/gate.ts); "held"
//             when the host finished queuing before the gate ended (else the trial is left out)
//   behind    the host's time to issue the first copy, and the rest per copy, right after one large
//             (BLOCKER_MIB, default 64) H2D copy on the same stream
//   issued    the GPU's time per copy as issued, nothing in front (what a run sees when the host binds),
//             and the host's time per copy issued meanwhile
// Patterns (host offsets, cycled): consecutive; random slots in one 2 MiB region; gaps of 1-3 blocks
// between copies (the calibration's layout batches); one slot in each of 512 regions 2 MiB apart, in
// turn; k = 24 random blocks of each of 32 layers of the executor's layout (block (l, b) at slot
// l * 528 + b), layer after layer; random slots over 1 GiB and over 4 GiB.
// DEV_SCATTER_MIB=n: the device side of each copy at a random block of an n MiB allocation.
// ALT=n: a third direction, batches of n copies D2H and H2D in turn.
// BESIDE_GEMV=n: n GEMVs (BESIDE_ROWS x 4096 FP16, default 16384 rows: ~45 us each on an H100; 53248 rows is a
// Llama-3-8B layer's 436 MB) run on the compute stream beside the queued copies ("engine" is then the copies' pace
// beside compute).
// COPY_BYTES=n: copy n bytes (at most 65536) from each 64 KiB slot instead of the whole slot (a quantized block
// in its FP16-sized slot, as the executor copies it: Llama-3-8B INT8 33792, INT2 9216).
// STRIDES=1,2,4,...: instead, sorted selections of about one slot in each stride, layer after layer,
// next to the gaps pattern; SLOTS=n: n slots a layer (default 528, an 8k context's layout; 2048 is a 32k
// context's, its 32 layers then spread over the whole 4 GiB pool). Cases alternate within each of ROUNDS rounds; medians per case.
//   node perf/device/issue-reach.mjs DIST     (KVTIER_HIL_ADDON names the addon)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
if (!dist) throw new Error('usage: node perf/device/issue-reach.mjs DIST');
const { openBackend } = await import(pathToFileURL(resolve(dist, 'hil/backend.js')).href);
const { ComputeGate } = await import(pathToFileURL(resolve(dist, 'hil/bench/gate.js')).href);
const rounds = Number(process.env.ROUNDS ?? 5);
const copies = Number(process.env.COPIES ?? 512);
if (!(Number.isInteger(rounds) && rounds >= 1)) throw new Error(`ROUNDS must be an integer >= 1 (got ${process.env.ROUNDS})`);
if (!(Number.isInteger(copies) && copies >= 16 && copies <= 1000)) throw new Error(`COPIES must be an integer in 16..1000, inside the copy queue (about 1020 on an H100: copy-queue.mjs) (got ${process.env.COPIES})`);
for (const k of ['ALT', 'BESIDE_GEMV', 'BESIDE_ROWS', 'DEV_SCATTER_MIB', 'BLOCKER_MIB', 'SLOTS']) {
  const v = process.env[k];
  if (v !== undefined && !(Number.isInteger(Number(v)) && Number(v) >= 0)) throw new Error(`${k} must be an integer >= 0 (got ${v})`);
}
for (const k of ['ALT', 'BESIDE_ROWS', 'BLOCKER_MIB', 'SLOTS']) if (process.env[k] === '0') throw new Error(`${k} must be above 0 where given`);
const SLOTS = Number(process.env.SLOTS ?? 528);
if (SLOTS > 4096) throw new Error(`SLOTS must be at most 4096 (32 layers of 64 KiB slots fill the 4 GiB pool at 2048; got ${SLOTS})`);
if (process.env.STRIDES !== undefined && !process.env.STRIDES.split(',').every((x) => Number.isInteger(Number(x)) && Number(x) >= 1)) {
  throw new Error(`STRIDES must be integers >= 1 separated by commas (got ${process.env.STRIDES})`);
}
const b = openBackend('cuda');
const BLOCK = 65536;
const BYTES = Number(process.env.COPY_BYTES ?? BLOCK);
if (!(Number.isInteger(BYTES) && BYTES >= 16 && BYTES <= BLOCK && BYTES % 16 === 0)) throw new Error(`COPY_BYTES must be a multiple of 16 in 16..65536 (got ${process.env.COPY_BYTES})`);
const MiB = 1 << 20;
const POOL = 4096 * MiB;
const BLOCKER = Number(process.env.BLOCKER_MIB ?? 64) * MiB;
const host = b.alloc('pinned', POOL);
// DEV_SCATTER_MIB=n: the device side of each copy at a random block of an n MiB arena (as the executor's
// slab slots are), else block i of the trial at offset i
const devSpan = Number(process.env.DEV_SCATTER_MIB ?? 0) * MiB;
const dev = b.alloc('device', Math.max(copies * BLOCK, devSpan));
const big = b.alloc('device', BLOCKER);
const [e0, e1] = [b.createEvent(), b.createEvent()];
const gate = await ComputeGate.open(b);
const beside = Number(process.env.BESIDE_GEMV ?? 0);
const besideRows = Number(process.env.BESIDE_ROWS ?? 16384);
const besideRegions = beside > 0 ? [b.alloc('device', besideRows * 4096 * 2), b.alloc('device', 4096 * 4), b.alloc('device', besideRows * 4)] : [];
const besideGemv = beside > 0 ? { w: besideRegions[0], x: besideRegions[1], y: besideRegions[2], rows: besideRows, cols: 4096 } : null;
const med = (xs) => (xs.length ? xs.slice().sort((x, y) => x - y)[Math.floor(xs.length / 2)] : NaN);
let seed = 4242;
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
const slotIn = (bytes) => Math.floor(rand() * Math.max(1, bytes / BLOCK)) * BLOCK;

const patterns = [];
const add = (label, gen) => patterns.push({ label, offsets: Array.from({ length: copies }, (_, i) => gen(i)) });
add('consecutive', (i) => i * BLOCK);
add('in-region 2 MiB', () => slotIn(2 * MiB));
let at = 0;
add('gaps of 1-3 blocks', () => ((at += (2 + Math.floor(rand() * 3)) * BLOCK) % POOL));
add('cycle 512 x 2 MiB', (i) => (i % 512) * 2 * MiB + slotIn(2 * MiB));
add('layers 24 of 32', (i) => ((Math.floor(i / 24) % 32) * 528 + Math.floor(rand() * 528)) * BLOCK);
add('random in 1 GiB', () => slotIn(1024 * MiB));
add('random in 4 GiB', () => slotIn(POOL));
// sorted selections, layer after layer (the executor's layout, SLOTS slots a layer): each layer's copies
// are a random subset of its slots in ascending order, about one slot in `stride`, as a selection
// policy's sorted block lists reach the executor
if (process.env.STRIDES) {
  patterns.length = 0;
  add('gaps of 1-3 blocks', () => ((at += (2 + Math.floor(rand() * 3)) * BLOCK) % POOL));
  for (const stride of process.env.STRIDES.split(',').map(Number)) {
    const list = [];
    const layers = Math.min(32, Math.floor(POOL / (SLOTS * BLOCK)));
    for (let l = 0; list.length < copies; l = (l + 1) % layers) {
      const picked = [];
      for (let b = 0; b < SLOTS; b++) if (stride === 1 || rand() < 1 / stride) picked.push(b);
      for (const b of picked) list.push((l * SLOTS + b) * BLOCK);
    }
    add(`sorted 1 in ${stride}`, (i) => list[i]);
  }
}
const dirs = process.env.ALT ? ['d2h', 'h2d', 'alt'] : ['d2h', 'h2d'];
const alt = Number(process.env.ALT ?? 0);
const cases = patterns.flatMap((p) => dirs.map((dir) => ({ ...p, dir, host: [], engine: [], issued: [], issuedHost: [], first: [], rest: [], dropped: 0 })));

const devOff = Array.from({ length: copies }, (_, i) => (devSpan > 0 ? slotIn(devSpan) : i * BLOCK));
const copy = (c, i) => {
  if (c.dir === 'alt' ? Math.floor(i / alt) % 2 === 0 : c.dir === 'd2h') b.copy('memory', host, c.offsets[i], dev, devOff[i], BYTES);
  else b.copy('memory', dev, devOff[i], host, c.offsets[i], BYTES);
};

console.log(`device ${b.info().name}; ${copies} copies of ${BYTES} B (64 KiB slots) per trial, ${rounds} rounds; device side ${devSpan > 0 ? `random blocks of ${devSpan / MiB} MiB` : 'consecutive'}`);
// touch the whole pool once
for (let off = 0; off < POOL; off += 64 * MiB) b.copy('memory', dev, 0, host, off, BLOCK);
await b.synchronize();
for (let r = 0; r < rounds; r++) {
  for (const c of cases) {
    // engine: queued behind the gate
    await b.synchronize();
    gate.hold(c.label);
    // BESIDE_GEMV=n: n GEMVs of BESIDE_ROWS x 4096 queued on the compute stream after the gate, to run beside the copies
    if (beside > 0) b.gemv('compute', besideGemv, beside);
    b.waitEvent('memory', gate.start);
    b.record('memory', e0);
    const t0 = performance.now();
    for (let i = 0; i < copies; i++) copy(c, i);
    const t1 = performance.now();
    b.record('memory', e1);
    const g = await gate.release();
    c.host.push(((t1 - t0) * 1000) / copies);
    if (g.held) c.engine.push((b.elapsedMs(e0, e1) * 1000) / copies);
    else c.dropped++;
    // behind: right after one large copy on the same stream
    await b.synchronize();
    b.copy('memory', big, 0, host, 0, BLOCKER);
    const u0 = performance.now();
    copy(c, 0);
    const u1 = performance.now();
    for (let i = 1; i < copies; i++) copy(c, i);
    const u2 = performance.now();
    await b.synchronize();
    c.first.push((u1 - u0) * 1000);
    c.rest.push(((u2 - u1) * 1000) / (copies - 1));
    // issued: nothing in front
    await b.synchronize();
    b.record('memory', e0);
    const v0 = performance.now();
    for (let i = 0; i < copies; i++) copy(c, i);
    c.issuedHost.push(((performance.now() - v0) * 1000) / copies);
    b.record('memory', e1);
    await b.synchronize();
    c.issued.push((b.elapsedMs(e0, e1) * 1000) / copies);
  }
}
const f = (x) => x.toFixed(3);
console.log(`us per copy (median over rounds): host issue | engine (queued) | as issued | behind a ${BLOCKER / MiB} MiB copy: first copy's issue, the rest's`);
for (const c of cases) {
  console.log(
    `${c.dir} ${c.label.padEnd(20)} host ${f(med(c.host))} | engine ${f(med(c.engine))} | issued ${f(med(c.issued))} (host ${f(med(c.issuedHost))}) | behind ${f(med(c.first))}, ${f(med(c.rest))}` +
      `   (host ${c.host.map(f).join(' ')}; engine ${c.engine.map(f).join(' ')}${c.dropped ? `; ${c.dropped} not held` : ''})`,
  );
}
for (const e of [e0, e1]) b.destroyEvent(e);
gate.free();
for (const r of besideRegions) b.free(r);
b.free(host);
b.free(dev);
b.free(big);
b.close();
