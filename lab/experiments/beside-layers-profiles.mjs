// Offline (no GPU): a validate run's profiles with their copies-under-compute terms taken from the fit over
// the calibration's batches beside attention + GEMV layers (fits.copy_batches.beside_layers in each
// PROFILE.fit.json) in place of the fit beside the layer GEMV alone, written into a copy of the run
// directory, so `kvtier hil validate-resim` prices the same hardware steps both ways.
//   node lab/experiments/beside-layers-profiles.mjs RUNDIR OUTDIR [DIST]
import fs from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [run, out, dist = 'dist'] = process.argv.slice(2);
if (!run || !out) throw new Error('usage: node lab/experiments/beside-layers-profiles.mjs RUNDIR OUTDIR [DIST]');
if (fs.existsSync(out)) throw new Error(`${out} exists: give a new directory`);
const { applyCopyBatchFit } = await import(pathToFileURL(resolve(dist, 'hil/calibrate/fit-copy-batches.js')).href);
fs.cpSync(run, out, { recursive: true });
for (const f of fs.readdirSync(join(out, 'profiles')).filter((x) => x.endsWith('.fit.json'))) {
  const side = JSON.parse(fs.readFileSync(join(out, 'profiles', f), 'utf8'));
  const cb = side.fits?.copy_batches;
  if (!cb?.beside_layers) throw new Error(`${f}: no fits.copy_batches.beside_layers (a calibration before the GEMV-alone batches?)`);
  const pf = join(out, 'profiles', f.replace(/\.fit\.json$/, '.json'));
  const p = JSON.parse(fs.readFileSync(pf, 'utf8'));
  const li = applyCopyBatchFit(p, { idle: cb.idle, under_compute: cb.beside_layers }, 'beside attention + GEMV layers (lab A/B)');
  fs.writeFileSync(pf, JSON.stringify(p, null, 2));
  console.log(`${pf}: ${JSON.stringify(p.links[li])}`);
}
