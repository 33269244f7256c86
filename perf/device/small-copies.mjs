// On the GPU machine (plain node, compiled JS): the memory stream's cost per small H2D copy when a
// policy's scattered blocks are issued one addon call each (copy), in one call looping cudaMemcpyAsync
// (copyMany) and as one cudaMemcpyBatchAsync (copyBatch); idle GPU, COPIES copies of BYTES each from
// scattered pinned slots into consecutive device space, median of ROUNDS.
//   node perf/device/small-copies.mjs DIST     (KVTIER_HIL_ADDON names the addon)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
const { openBackend } = await import(pathToFileURL(resolve(dist, 'hil/backend.js')).href);
const b = openBackend('cuda');
const rounds = Number(process.env.ROUNDS ?? 7);
const med = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const host = b.alloc('pinned', 256 << 20);
const dev = b.alloc('device', 256 << 20);
const e0 = b.createEvent();
const e1 = b.createEvent();
console.log(`device ${b.info().name}`);
for (const bytes of [9216, 33792, 65536, 262144]) {
  const n = Math.min(2000, Math.floor((128 << 20) / bytes));
  const list = new Float64Array(n * 5);
  for (let i = 0; i < n; i++) list.set([dev, i * bytes, host, ((i * 7919) % n) * bytes * 2, bytes], i * 5);
  const out = [];
  for (const method of ['copy', 'copyMany', 'copyBatch']) {
    const times = [];
    const hostUs = [];
    for (let r = 0; r < rounds; r++) {
      await b.synchronize();
      const t0 = performance.now();
      b.record('memory', e0);
      if (method === 'copy') for (let i = 0; i < n; i++) b.copy('memory', dev, i * bytes, host, list[i * 5 + 3], bytes);
      else if (method === 'copyMany') b.copyMany('memory', list);
      else b.copyBatch('memory', list);
      b.record('memory', e1);
      hostUs.push(((performance.now() - t0) * 1e3) / n);
      await b.synchronize();
      times.push((b.elapsedMs(e0, e1) * 1e3) / n);
    }
    out.push(`${method} ${med(times).toFixed(2)} us/copy (host issue ${med(hostUs).toFixed(2)} us/copy)`);
  }
  console.log(`${n} x ${bytes} B: ${out.join(' | ')}`);
}
b.close();
