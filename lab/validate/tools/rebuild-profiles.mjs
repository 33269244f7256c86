// Offline (no GPU): a validate run's calibrated profiles rebuilt by this build from their stored
// measurements (hil/calibrate/calibrate.ts buildCalibration, as `hil calibrate` builds a profile after
// measuring), into a copy of the run directory, so that `kvtier hil validate-resim` prices the same
// hardware steps with this build's way of building a profile. Prints, per profile, the fields that
// changed.
//   node lab/validate/tools/rebuild-profiles.mjs RUNDIR OUTDIR [BASE]   (after npm run build)
import fs from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [run, out, base = 'h100-pcie5'] = process.argv.slice(2);
if (!run || !out) throw new Error('usage: node lab/validate/tools/rebuild-profiles.mjs RUNDIR OUTDIR [BASE]');
if (fs.existsSync(out)) throw new Error(`${out} exists: give a new directory`);
const dist = resolve(new URL('../../../dist', import.meta.url).pathname);
const { buildCalibration } = await import(pathToFileURL(join(dist, 'hil/calibrate/calibrate.js')).href);
const { loadModel } = await import(pathToFileURL(join(dist, 'sim/models/load-model.js')).href);
fs.cpSync(run, out, { recursive: true });
const v = JSON.parse(fs.readFileSync(join(run, 'validate.json'), 'utf8'));
const changed = (a, b, path = '', acc = []) => {
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) if (path !== '.sources' || k.startsWith('links')) changed(a[k], b[k], `${path}.${k}`, acc);
  } else if (JSON.stringify(a) !== JSON.stringify(b)) acc.push(`${path}: ${JSON.stringify(a)?.slice(0, 60)} -> ${JSON.stringify(b)?.slice(0, 90)}`);
  return acc;
};
for (const entry of v.profiles) {
  const name = entry.file.split('/').pop().replace(/\.json$/, '');
  const pf = join(out, 'profiles', `${name}.json`);
  const ff = join(out, 'profiles', `${name}.fit.json`);
  if (!fs.existsSync(ff)) continue;
  const side = JSON.parse(fs.readFileSync(ff, 'utf8'));
  const before = JSON.parse(fs.readFileSync(pf, 'utf8'));
  const m = side.measurements;
  if (m.memory_bytes === undefined) m.memory_bytes = Math.round(before.tiers[0].capacity_GiB * 1024 ** 3);
  if (m.date === undefined) m.date = /(\d{4}-\d\d-\d\d)/.exec(before.description)[1];
  const r = buildCalibration({ m, base, model: loadModel(entry.model), device: side.device, kind: 'cuda', attentionOptions: side.attention_options });
  const after = JSON.parse(JSON.stringify(r.profile));
  fs.writeFileSync(pf, JSON.stringify(after, null, 2) + '\n');
  console.log(`${name}:\n  ${changed(before, after).join('\n  ') || '(unchanged)'}`);
}
