// Rebuilds a stored validation run's calibrated profiles from their fit files' measurements, with the
// host issue probes before each timing taken out (the issue costs as timed, each at its own moment's
// pace), into a copy of the run's folder, after checking that the rebuild gives the stored profile
// exactly in every field but the five issue costs (a build whose calibration puts the costs at the probes'
// median pace, 2d0ee31-8d45b1a, also gives those; later builds keep them as timed). Then `kvtier hil validate-resim COPY --out OUT` re-simulates the same hardware
// runs with the as-timed costs.
//   node refit-as-timed.mjs DIST RUN_DIR COPY_DIR
import { readFileSync, writeFileSync, cpSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
const [dist, dir, copy] = process.argv.slice(2);
if (!copy) throw new Error('usage: node refit-as-timed.mjs DIST RUN_DIR COPY_DIR (COPY_DIR is replaced)');
const { buildCalibration } = await import(pathToFileURL(resolve(dist, 'hil/calibrate/calibrate.js')).href);
const { loadModel } = await import(pathToFileURL(resolve(dist, 'sim/models/load-model.js')).href);
rmSync(copy, { recursive: true, force: true });
cpSync(dir, copy, { recursive: true });
const v = JSON.parse(readFileSync(join(dir, 'validate.json'), 'utf8'));
for (const p of v.profiles) {
  const name = p.file.split('/').pop();
  const stored = JSON.parse(readFileSync(join(dir, 'profiles', name), 'utf8'));
  const fit = JSON.parse(readFileSync(join(dir, 'profiles', name.replace(/\.json$/, '.fit.json')), 'utf8'));
  const modelPath = p.model.includes('/') && !p.model.startsWith('/work/main') ? p.model : p.model.replace('/work/main/', '');
  const model = loadModel(modelPath);
  const build = (m) => buildCalibration({ m, base: v.grid.base_hardware, model, device: fit.device, kind: 'cuda', attentionOptions: fit.attention_options }).profile;
  const keys = ['issue_copy_us', 'issue_record_us', 'issue_kernel_us', 'issue_convert_us', 'issue_attention_us'];
  const others = (gpu) => Object.fromEntries(Object.entries(gpu).filter(([k]) => !keys.includes(k)));
  const again = build(fit.measurements);
  const same = isDeepStrictEqual(others(again.gpu), others(stored.gpu)) && isDeepStrictEqual(again.links, stored.links);
  const m = { ...fit.measurements };
  delete m.host_probes_before;
  const asTimed = build(m);
  console.log(JSON.stringify({ profile: name, rebuilt_equals_stored_but_issue_costs: same, paced: Object.fromEntries(keys.map((k) => [k, stored.gpu[k]])), as_timed: Object.fromEntries(keys.map((k) => [k, asTimed.gpu[k]])) }));
  if (!same) throw new Error(`${name}: the rebuild differs from the stored profile beyond its issue costs; not written`);
  writeFileSync(join(copy, 'profiles', name), JSON.stringify({ ...stored, gpu: { ...stored.gpu, ...Object.fromEntries(keys.map((k) => [k, asTimed.gpu[k]])) }, sources: { ...stored.sources, ...Object.fromEntries(keys.map((k) => [`gpu.${k}`, asTimed.sources[`gpu.${k}`]])) } }, null, 2) + '\n');
}
