// On the GPU machine (plain node, compiled JS): N calibrations of one model back to back on one machine, at
// the held-out points the standing grid uses, to see how far the calibration repeats. Each profile (and its
// .fit.json) goes to OUTDIR/cal-K.json; a validate run's cells can then be simulated again with each
// (lab/experiments/calibration-spread.mjs).
//   node perf/device/calibrate-repeat.mjs DIST OUTDIR [N] [MODEL]     (QUICK=0 for the full calibration, BACKEND=host;
//   the points are always the grid's full held-out set, as kvtier hil validate takes them on the cuda backend)
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, outArg, nArg, modelArg] = process.argv.slice(2);
if (!dist || !outArg) throw new Error('usage: node perf/device/calibrate-repeat.mjs DIST OUTDIR [N] [MODEL]');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const out = resolve(outArg);
mkdirSync(out, { recursive: true });
const n = Number(nArg ?? 3);
if (!Number.isInteger(n) || n < 1) throw new Error(`calibrate-repeat: N must be a whole number >= 1 (got "${nArg}"); usage: node perf/device/calibrate-repeat.mjs DIST OUTDIR [N] [MODEL]`);
const model = modelArg ?? 'llama-3-8b';
const { calibrate, writeCalibration } = await load('hil/calibrate/calibrate.js');
const { heldOutPoints } = await load('hil/validate/calibration-points.js');
const quick = process.env.QUICK !== '0';
const points = heldOutPoints([8192, 32768, 131072], { quick: false });
for (let k = 1; k <= n; k++) {
  const t0 = performance.now();
  const r = await calibrate({ backend: process.env.BACKEND ?? 'cuda', base: 'h100-pcie5', model, quick, fileDir: '/tmp', points, log: () => {} });
  writeCalibration(`${out}/cal-${k}.json`, r);
  console.log(`calibration ${k} of ${n} (${model}, ${quick ? 'quick' : 'full'}): ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
