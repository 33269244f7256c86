// Offline (no GPU): a validate run's profiles with their per-batch copy terms refitted by this build's
// fit (hil/calibrate/fit-copy-batches.ts) from the layout batches stored in each PROFILE.fit.json, written
// into a copy of the run directory, so `kvtier hil validate-resim` prices the same hardware steps with
// the calibration's method of this build. Prints, per profile, the terms before and after.
// WITHOUT_SMALL=1 leaves out the single-block batches at the quantized sizes (labels "single N-byte
// blocks"): the fit a calibration without them would have made from the same timings.
//   node lab/validate/tools/refit-copy-batches.mjs RUNDIR OUTDIR [DIST]
import fs from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [run, out, dist = 'dist'] = process.argv.slice(2);
if (!run || !out) throw new Error('usage: node lab/validate/tools/refit-copy-batches.mjs RUNDIR OUTDIR [DIST]');
if (fs.existsSync(out)) throw new Error(`${out} exists: give a new directory`);
const { applyCopyBatchFit, fitLayoutCopyBatches } = await import(pathToFileURL(resolve(dist, 'hil/calibrate/fit-copy-batches.js')).href);
const { isSmallLabel } = await import(pathToFileURL(resolve(dist, 'hil/bench/layout-batches.js')).href);
const without = process.env.WITHOUT_SMALL === '1';
fs.cpSync(run, out, { recursive: true });
const terms = (p, li) => {
  const L = p.links[li];
  const d = (x) => `alpha ${x.alpha_us}/${x.alpha_under_compute_us} us, switch ${x.switch_us ?? '-'}/${x.switch_under_compute_us ?? '-'}`;
  return `batch ${p.gpu.copy_batch_us} us; a_to_b ${d(L.a_to_b)}; b_to_a ${d(L.b_to_a)}`;
};
for (const f of fs.readdirSync(join(out, 'profiles')).filter((x) => x.endsWith('.fit.json'))) {
  const side = JSON.parse(fs.readFileSync(join(out, 'profiles', f), 'utf8'));
  const pf = join(out, 'profiles', f.replace(/\.fit\.json$/, '.json'));
  const p = JSON.parse(fs.readFileSync(pf, 'utf8'));
  const li = p.links.findIndex((l) => l.a === 'hbm' || l.b === 'hbm');
  const before = terms(p, li);
  const m = without ? Object.fromEntries(Object.entries(side.measurements).map(([k, v]) => [k, /_layout/.test(k) && Array.isArray(v) ? v.filter((x) => !isSmallLabel(x.label)) : v])) : side.measurements;
  const fits = fitLayoutCopyBatches(m);
  // the fit writes each direction of the link anew: what other benches set there (spread_us, the bulk pace)
  // stays as calibrated
  const kept = ['a_to_b', 'b_to_a'].map((d) => Object.fromEntries(Object.entries(p.links[li][d] ?? {}).filter(([k]) => ['spread_us', 'bulk_GBps', 'bulk_from_bytes', 'request_us'].includes(k))));
  applyCopyBatchFit(p, fits, `refitted offline (lab/validate/tools/refit-copy-batches.mjs${without ? ', the single quantized-block batches left out' : ''})`);
  ['a_to_b', 'b_to_a'].forEach((d, i) => Object.assign(p.links[li][d], kept[i]));
  fs.writeFileSync(pf, JSON.stringify(p, null, 2));
  console.log(`${f}:\n  before ${before}\n  after  ${terms(p, li)}${fits.idle.held_at_zero ? ` (idle: ${fits.idle.held_at_zero.join(', ')} held at 0)` : ''}${fits.under_compute.held_at_zero ? ` (under compute: ${fits.under_compute.held_at_zero.join(', ')} held at 0)` : ''}`);
}
