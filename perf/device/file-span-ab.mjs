// On the GPU machine (plain node, compiled JS): does the size of the file the calibration reads change
// what its read batches measure? The executor-pattern read batches of hil/calibrate/file-batches.ts
// (Llama-3-8B's 64 KiB FP16 blocks, 388 blocks per layer, 4 measured layers, 4 rounds, the quantized
// request sizes) over files of SPANS layers (default 4, 32 and 64; the measured layers spread evenly
// over them), alternated ROUNDS times (default 3), each on a fresh file. Per file: the layer batches'
// fit (alpha, GB/s), the median time per request of each request size, the host's time per batch.
//   node perf/device/file-span-ab.mjs DIST DIR     (KVTIER_HIL_ADDON names the addon; DIR: where the files go)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, dir] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { measureFileBatches } = await load('hil/calibrate/file-batches.js');
const { fitFileBatches } = await load('hil/calibrate/calibrate.js');
const spans = (process.env.SPANS ?? '4 32 64').split(/\s+/).filter(Boolean).map(Number);
const rounds = Number(process.env.ROUNDS ?? 3);
const med = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const b = openBackend('cuda');
console.log(`device ${b.info().name}; files in ${dir}`);
try {
  for (let r = 0; r < rounds; r++) {
    for (const fileLayers of spans) {
      const t0 = performance.now();
      const res = await measureFileBatches(b, { dir, threads: 32, blockBytes: 65536, blocksPerLayer: 388, layers: 4, fileLayers, rounds: 4, requestBytes: [9216, 17408, 33792] });
      const fit = fitFileBatches(res.points.filter((p) => p.kind !== 'sized'));
      const sizes = [...new Set(res.points.filter((p) => p.kind === 'sized').map((p) => p.request_bytes))];
      const perReq = sizes.map((q) => `${q / 1024} KiB ${med(res.points.filter((p) => p.request_bytes === q).map((p) => p.us / p.requests)).toFixed(2)} us`);
      const host = med(res.points.map((p) => p.host_us));
      console.log(`round ${r} file ${fileLayers} layers (${(res.file_bytes / 2 ** 20).toFixed(0)} MiB): batches alpha ${fit.alpha_us.toFixed(2)} us, ${fit.GBps.toFixed(3)} GB/s (overall ${res.GBps.toFixed(3)} GB/s); per request ${perReq.join(', ')}; host ${host.toFixed(1)} us per batch; ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
  }
} finally {
  b.close();
}
