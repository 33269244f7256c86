// On the GPU machine (plain node, compiled JS): the memory stream's time per single-block copy by the
// length of its group (copies between two mark events, as the executor issues a layer's fetch or
// demotion), by size and direction, gated (every copy queued before the GPU reaches them) and issued
// while the GPU runs (the host's pace in the time), on an otherwise idle GPU and beside back-to-back
// GEMVs of a Llama-3-8B MLP projection's size on the compute stream (smaller than the calibration's layer
// GEMV). Host slots FP16-block-sized and consecutive (block b at
// b * 65536), device side packed at the copy's size; then, groups of 24 only, the host slots 2-4 apart
// (as the calibration's layout batches place single blocks) and, for D2H, the device side scattered
// (each copy's device slot drawn from the whole region, as a policy's demotions read HBM slots freed
// and reused at random). COPIES copies per trial, median of ROUNDS.
//   node perf/device/group-length.mjs DIST     (KVTIER_HIL_ADDON names the addon)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
const { openBackend } = await import(pathToFileURL(resolve(dist, 'hil/backend.js')).href);
const b = openBackend(process.env.BACKEND ?? 'cuda');
const rounds = Number(process.env.ROUNDS ?? 5);
const total = Number(process.env.COPIES ?? 1656);
const med = (xs) => xs.slice().sort((a, c) => a - c)[Math.floor(xs.length / 2)];
const SLOT = 65536;
// (room for the slots 2-4 apart)
const host = b.alloc('pinned', 4 * total * SLOT);
const dev = b.alloc('device', total * SLOT);
// the compute stream's gate and GEMVs: 14336 x 4096 FP16 (a Llama-3-8B MLP projection's size)
const rows = 14336;
const cols = 4096;
const w = b.alloc('device', rows * cols * 2);
const x = b.alloc('device', cols * 4);
const y = b.alloc('device', rows * 4);
b.write(x, 0, new Float32Array(cols).fill(0.5));
const gemv = { w, x, y, rows, cols };
const ev = Array.from({ length: 4 }, () => b.createEvent());
const marks = Array.from({ length: 2 * total + 2 }, () => b.createEvent());
const [gate, e0, e1, c1] = ev;
b.record('compute', e0);
b.gemv('compute', gemv, 20);
b.record('compute', e1);
await b.synchronize();
const gemvUs = (b.elapsedMs(e0, e1) * 1e3) / 20;
console.log(`device ${b.info().name}; GEMV ${rows}x${cols} ${gemvUs.toFixed(1)} us`);

// host slot and device offset of copy i, by layout
const gapped = [0];
for (let i = 1; i < total; i++) gapped.push(gapped[i - 1] + 2 + ((i - 1) % 3));
const scattered = Array.from({ length: total }, (_, i) => (i * 7919) % total);
const hostSlot = (layout, i) => (layout === 'gapped' ? gapped[i] : i) * SLOT;
const devOff = (layout, i, bytes) => (layout === 'scattered' ? scattered[i] : i) * bytes;

function trial(bytes, dir, group, gated, beside, layout = 'consecutive') {
  const nGroups = Math.ceil(total / group);
  const gateReps = gated ? Math.ceil((total * 4 + 200) / gemvUs) : 1;
  b.gemv('compute', gemv, gateReps);
  b.record('compute', gate);
  // beside: GEMVs on the compute stream from the gate on, covering the copies' time
  if (beside) b.gemv('compute', gemv, Math.ceil((total * 8) / gemvUs));
  b.waitEvent('memory', gate);
  b.record('memory', e0);
  let m = 0;
  let i = 0;
  for (let g = 0; g < nGroups; g++) {
    b.record('memory', marks[m++]);
    for (let k = 0; k < group && i < total; k++, i++) {
      if (dir === 'h2d') b.copy('memory', dev, devOff(layout, i, bytes), host, hostSlot(layout, i), bytes);
      else b.copy('memory', host, hostSlot(layout, i), dev, devOff(layout, i, bytes), bytes);
    }
    b.record('memory', marks[m++]);
  }
  b.record('memory', e1);
  b.record('compute', c1);
}

for (const beside of [false, true]) {
  for (const dir of ['h2d', 'd2h']) {
    for (const bytes of [9216, 17408, 33792, 65536]) {
      const row = [];
      for (const group of [24, 96, 414]) {
        for (const gated of [true, false]) {
          const t = [];
          for (let r = 0; r < rounds; r++) {
            await b.synchronize();
            trial(bytes, dir, group, gated, beside);
            await b.synchronize();
            t.push((b.elapsedMs(e0, e1) * 1e3) / total);
          }
          row.push(`g${group}${gated ? '' : ' live'} ${med(t).toFixed(3)}`);
        }
      }
      console.log(`${beside ? 'beside GEMV' : 'idle'} ${dir} ${bytes} B: ${row.join(' | ')} us/copy`);
    }
  }
}
// groups of 24, gated: consecutive host slots against slots 2-4 apart, and (D2H) sequential against
// scattered device slots
for (const beside of [false, true]) {
  for (const dir of ['h2d', 'd2h']) {
    for (const bytes of [9216, 33792, 65536]) {
      const row = [];
      for (const layout of dir === 'h2d' ? ['consecutive', 'gapped'] : ['consecutive', 'gapped', 'scattered']) {
        const t = [];
        for (let r = 0; r < rounds; r++) {
          await b.synchronize();
          trial(bytes, dir, 24, true, beside, layout);
          await b.synchronize();
          t.push((b.elapsedMs(e0, e1) * 1e3) / total);
        }
        row.push(`${layout} ${med(t).toFixed(3)}`);
      }
      console.log(`layouts, ${beside ? 'beside GEMV' : 'idle'} ${dir} ${bytes} B, groups of 24: ${row.join(' | ')} us/copy`);
    }
  }
}
b.close();
