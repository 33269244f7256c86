// Offline (no GPU): a copy of a validate run whose calibrated profiles get their NVMe read direction fitted
// again from their stored measurements with a fixed time per batch (hil/calibrate/calibrate.ts
// fitFileReadBatches, fileRequestCurve and applyFileReadFit, as `hil calibrate` fits it), the rest of each
// profile as stored, so that `kvtier hil validate-resim` prices the same hardware steps with that fit.
//   node lab/validate/tools/with-batch-us.mjs RUNDIR OUTDIR   (after npm run build)
import fs from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [run, out] = process.argv.slice(2);
if (!run || !out) throw new Error('usage: node lab/validate/tools/with-batch-us.mjs RUNDIR OUTDIR');
if (fs.existsSync(out)) throw new Error(`${out} exists: give a new directory`);
const dist = resolve(new URL('../../../dist', import.meta.url).pathname);
const { applyFileReadFit, fileRequestCurve, fitFileReadBatches, readBatchForm } = await import(pathToFileURL(join(dist, 'hil/calibrate/calibrate.js')).href);
fs.cpSync(run, out, { recursive: true });
const v = JSON.parse(fs.readFileSync(join(run, 'validate.json'), 'utf8'));
for (const entry of v.profiles) {
  const name = entry.file.split('/').pop().replace(/\.json$/, '');
  const pf = join(out, 'profiles', `${name}.json`);
  const ff = join(out, 'profiles', `${name}.fit.json`);
  if (!fs.existsSync(ff)) continue;
  const m = JSON.parse(fs.readFileSync(ff, 'utf8')).measurements;
  const p = JSON.parse(fs.readFileSync(pf, 'utf8'));
  const batches = m.file_read_batch ?? [];
  if (batches.filter((x) => x.kind !== 'sized').length < 2 || !m.file_batch_info) continue;
  const nv = p.tiers.find((t) => t.kind === 'nvme').name;
  const link = p.links.find((l) => l.a === nv || l.b === nv);
  const before = { ...(link.b === nv ? link.b_to_a : link.a_to_b) };
  const fit = fitFileReadBatches(batches);
  const li = applyFileReadFit(p, fit, 'refitted from the stored measurements', 'the calibration\'s file read batches', readBatchForm(fit), fileRequestCurve(batches, fit, m.file_batch_info.block_bytes));
  const after = p.links[li].b === nv ? p.links[li].b_to_a : p.links[li].a_to_b;
  fs.writeFileSync(pf, JSON.stringify(p, null, 2) + '\n');
  console.log(`${name}: alpha ${before.alpha_us} -> ${after.alpha_us} us, ${before.GBps} -> ${after.GBps} GB/s, batch_us ${after.batch_us ?? 0}${fit.degenerate ? ` (${fit.degenerate})` : ''}`);
}
