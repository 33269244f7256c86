// Offline (no GPU): a copy of a validate run whose calibrated profiles get the NVMe read direction's
// batch_us from their stored measurements (hil/calibrate/calibrate.ts fileBatchUs over the calibration's
// file read batches and its fitted line, as `hil calibrate` now sets it), the rest of each profile as
// stored, so that `kvtier hil validate-resim` prices the same hardware steps with the batch's fixed time.
//   node lab/validate/tools/with-batch-us.mjs RUNDIR OUTDIR   (after npm run build)
import fs from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [run, out] = process.argv.slice(2);
if (!run || !out) throw new Error('usage: node lab/validate/tools/with-batch-us.mjs RUNDIR OUTDIR');
if (fs.existsSync(out)) throw new Error(`${out} exists: give a new directory`);
const dist = resolve(new URL('../../../dist', import.meta.url).pathname);
const { fileBatchUs, fitFileBatches } = await import(pathToFileURL(join(dist, 'hil/calibrate/calibrate.js')).href);
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
  if (batches.filter((x) => x.kind !== 'sized').length < 2) continue;
  const b = fileBatchUs(batches, fitFileBatches(batches));
  const nv = p.tiers.find((t) => t.kind === 'nvme').name;
  const link = p.links.find((l) => l.a === nv || l.b === nv);
  const rd = link.b === nv ? link.b_to_a : link.a_to_b;
  if (b) rd.batch_us = b.us;
  fs.writeFileSync(pf, JSON.stringify(p, null, 2) + '\n');
  console.log(`${name}: batch_us ${b ? `${b.us} us (median of ${b.batches} small batches, ${b.min} to ${b.max})` : 'none (no small batches)'}`);
}
