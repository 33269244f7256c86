// On the GPU machine (plain node, compiled JS): the calibration's executor-layout copy batches (idle GPU and
// under compute, quick settings, llama-3-8b at 6144 tokens as the standing grid's held-out calibration takes
// them) measured after IDLE_MS of an idle link ('cold') and right after a link warm-up (timing/link-warmup.ts,
// 'warm'), alternated ROUNDS times in one process; per measurement the fitted H2D / D2H GB/s.
//   node perf/device/link-warm-ab.mjs DIST     (KVTIER_HIL_ADDON names the addon)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { measureLayoutCopies } = await load('hil/calibrate/measure.js');
const { fitLayoutCopyBatches } = await load('hil/calibrate/fit-copy-batches.js');
const { warmLink } = await load('hil/timing/link-warmup.js');
const { loadModel } = await load('sim/models/load-model.js');
const b = openBackend('cuda');
const o = { model: loadModel('llama-3-8b'), blockTokens: 16, groupSize: 128, quick: true };
const rounds = Number(process.env.ROUNDS ?? 3);
const idleMs = Number(process.env.IDLE_MS ?? 3000);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
console.log(`device ${b.info().name}; ${rounds} rounds, idle ${idleMs} ms before each measurement`);
for (let r = 1; r <= rounds; r++) {
  for (const how of ['cold', 'warm']) {
    await sleep(idleMs);
    const w = how === 'warm' ? await warmLink(b, 200) : null;
    const t0 = performance.now();
    const layout = await measureLayoutCopies(b, o, 6144);
    const idle = await measureLayoutCopies(b, o, 6144, false);
    const f = fitLayoutCopyBatches({ h2d_layout: layout.h2d, d2h_layout: layout.d2h, mixed_layout: layout.mixed, h2d_layout_idle: idle.h2d, d2h_layout_idle: idle.d2h, mixed_layout_idle: idle.mixed });
    const g = (x) => `h2d ${x.h2d.GBps.toFixed(2)} (alpha ${x.h2d.alpha_us.toFixed(2)}) d2h ${x.d2h.GBps.toFixed(2)} (alpha ${x.d2h.alpha_us.toFixed(2)})`;
    console.log(`round ${r} ${how}${w ? ` (warm-up ${w.rounds} round trips in ${w.ms.toFixed(0)} ms, last h2d ${w.h2d_GBps.toFixed(2)} d2h ${w.d2h_GBps.toFixed(2)} GB/s)` : ''}: idle ${g(f.idle)} | under compute ${g(f.under_compute)} [${((performance.now() - t0) / 1000).toFixed(1)} s]`);
  }
}
b.close();
