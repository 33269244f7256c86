// On the GPU machine (plain node, compiled JS): the memory stream's time per single-block copy by the
// length of its group (copies between two mark events, as the executor issues a layer's fetch or
// demotion), by size and direction, gated (every copy queued before the GPU reaches them) and issued
// while the GPU runs (the host's pace in the time), on an otherwise idle GPU and beside back-to-back
// layer-sized GEMVs on the compute stream. Host slots FP16-block-sized and consecutive (block b at
// b * 65536), device side packed at the copy's size. COPIES copies per trial, median of ROUNDS.
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
const host = b.alloc('pinned', total * SLOT);
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

function trial(bytes, dir, group, gated, beside) {
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
      if (dir === 'h2d') b.copy('memory', dev, i * bytes, host, i * SLOT, bytes);
      else b.copy('memory', host, i * SLOT, dev, i * bytes, bytes);
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
b.close();
