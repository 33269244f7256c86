// Offline (no GPU): what timing a validate run's layout copy batches twice (hil/calibrate/retime-copies.ts)
// would have given, with the second timing taken from another run's calibration of the same model on the
// same GPU kind (another lease: a stand-in for a second timing minutes later on the same one). Per
// profile of RUNDIR whose model OTHER calibrated with the same batches, each idle and beside-GEMV batch
// keeps the lesser of the two timings and the profile is rebuilt from the measurements
// (buildCalibration), into a copy of RUNDIR, so that `kvtier hil validate-resim` prices the same
// hardware steps with it. Prints, per profile, how many batches came from OTHER and the H2D alpha.
//   node lab/validate/tools/retime-emulate.mjs RUNDIR OTHER OUTDIR [BASE]   (after npm run build)
import fs from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [run, other, out, base = 'h100-pcie5'] = process.argv.slice(2);
if (!run || !other || !out) throw new Error('usage: node lab/validate/tools/retime-emulate.mjs RUNDIR OTHER OUTDIR [BASE]');
if (fs.existsSync(out)) throw new Error(`${out} exists: give a new directory`);
const dist = resolve(new URL('../../../dist', import.meta.url).pathname);
const load = (p) => import(pathToFileURL(join(dist, p)).href);
const { buildCalibration } = await load('hil/calibrate/calibrate.js');
const { lesserTimings } = await load('hil/calibrate/retime-copies.js');
const { loadModel } = await load('sim/models/load-model.js');
fs.cpSync(run, out, { recursive: true });
const v = JSON.parse(fs.readFileSync(join(run, 'validate.json'), 'utf8'));
for (const entry of v.profiles) {
  const name = entry.file.split('/').pop().replace(/\.json$/, '');
  const pf = join(out, 'profiles', `${name}.json`);
  const ff = join(out, 'profiles', `${name}.fit.json`);
  const of = join(other, 'profiles', `${name}.fit.json`);
  if (!fs.existsSync(ff) || !fs.existsSync(of)) {
    console.log(`${name}: not in both runs, left as calibrated`);
    continue;
  }
  const side = JSON.parse(fs.readFileSync(ff, 'utf8'));
  const profile = JSON.parse(fs.readFileSync(pf, 'utf8'));
  const m = side.measurements;
  const o = JSON.parse(fs.readFileSync(of, 'utf8')).measurements;
  const cond = (x, sfx) => [...(x[`h2d_layout${sfx}`] ?? []), ...(x[`d2h_layout${sfx}`] ?? []), ...(x[`mixed_layout${sfx}`] ?? [])];
  let i;
  let g;
  try {
    i = lesserTimings(cond(m, '_idle'), cond(o, '_idle'));
    g = lesserTimings(cond(m, '_gemv'), cond(o, '_gemv'));
  } catch (e) {
    console.log(`${name}: ${e.message}; left as calibrated`);
    continue;
  }
  const put = (sfx, pts) => {
    for (const d of ['h2d', 'd2h', 'mixed']) if (m[`${d}_layout${sfx}`]) m[`${d}_layout${sfx}`] = pts.filter((p) => p.direction === d);
  };
  put('_idle', i.points);
  put('_gemv', g.points);
  m.layout_retimed = { at: `another run's calibration (${other})`, idle: cond(o, '_idle'), gemv: cond(o, '_gemv'), compared: { idle: i.points.length, gemv: g.points.length }, from_second: { idle: i.fromSecond, gemv: g.fromSecond } };
  if (m.memory_bytes === undefined) m.memory_bytes = Math.round(profile.tiers[0].capacity_GiB * 1024 ** 3);
  const date = profile.description.match(/(\d{4}-\d\d-\d\d)/)[1];
  const model = loadModel(entry.model);
  const r = buildCalibration({ m, base, model, device: side.device, kind: 'cuda', attentionOptions: side.attention_options, date });
  fs.writeFileSync(pf, JSON.stringify(r.profile, null, 2) + '\n');
  fs.writeFileSync(ff, JSON.stringify({ ...side, fits: r.fits, measurements: m }, null, 2) + '\n');
  const h2d = (p) => p.links[0].b_to_a.alpha_us;
  console.log(`${name}: ${i.fromSecond.length} of ${i.points.length} idle and ${g.fromSecond.length} of ${g.points.length} beside-GEMV batches from ${other}; H2D alpha ${h2d(profile)} -> ${h2d(r.profile)} us`);
}
