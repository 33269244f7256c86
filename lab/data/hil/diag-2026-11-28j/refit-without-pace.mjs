// Rebuilds a stored validation run's calibrated profiles from their fit files' measurements with the
// plan that moves nothing (`plan_launch`) taken out, so that records, kernels, conversions and attention
// launches are priced as issued in a row and copies and conversions from their plans at those costs, into
// a copy of the run's folder. It first checks that the rebuild with `plan_launch` gives the stored profile
// exactly (its `gpu`, `links` and the issue costs' sources). Then `kvtier hil validate-resim COPY --out OUT`
// re-simulates the same hardware runs without the launch pace.
//   node refit-without-pace.mjs DIST RUN_DIR COPY_DIR
import { readFileSync, writeFileSync, cpSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
const [dist, dir, copy] = process.argv.slice(2);
if (!copy) throw new Error('usage: node refit-without-pace.mjs DIST RUN_DIR COPY_DIR (COPY_DIR is replaced)');
const { buildCalibration } = await import(pathToFileURL(resolve(dist, 'hil/calibrate/calibrate.js')).href);
const { loadModel } = await import(pathToFileURL(resolve(dist, 'sim/models/load-model.js')).href);
rmSync(copy, { recursive: true, force: true });
cpSync(dir, copy, { recursive: true });
const v = JSON.parse(readFileSync(join(dir, 'validate.json'), 'utf8'));
const keys = ['issue_copy_us', 'issue_record_us', 'issue_kernel_us', 'issue_convert_us', 'issue_attention_us'];
for (const p of v.profiles) {
  const name = p.file.split('/').pop();
  const stored = JSON.parse(readFileSync(join(dir, 'profiles', name), 'utf8'));
  const fit = JSON.parse(readFileSync(join(dir, 'profiles', name.replace(/\.json$/, '.fit.json')), 'utf8'));
  if (!fit.measurements.plan_launch) throw new Error(`${name}: its fit file has no plan_launch`);
  const modelPath = p.model.startsWith('/work/main/') ? p.model.replace('/work/main/', '') : p.model;
  const model = loadModel(modelPath);
  const build = (m) => buildCalibration({ m, base: v.grid.base_hardware, model, device: fit.device, kind: 'cuda', attentionOptions: fit.attention_options }).profile;
  const again = build(fit.measurements);
  const same = isDeepStrictEqual(again.gpu, stored.gpu) && isDeepStrictEqual(again.links, stored.links) && keys.every((k) => again.sources[`gpu.${k}`] === stored.sources[`gpu.${k}`]);
  if (!same) throw new Error(`${name}: the rebuild with plan_launch differs from the stored profile; not written`);
  const m = { ...fit.measurements };
  delete m.plan_launch;
  const bare = build(m);
  const others = (gpu) => Object.fromEntries(Object.entries(gpu).filter(([k]) => !keys.includes(k)));
  if (!isDeepStrictEqual(others(bare.gpu), others(stored.gpu)) || !isDeepStrictEqual(bare.links, stored.links)) throw new Error(`${name}: without plan_launch more than the issue costs changed; not written`);
  console.log(JSON.stringify({ profile: name, paced: Object.fromEntries(keys.map((k) => [k, stored.gpu[k]])), in_a_row: Object.fromEntries(keys.map((k) => [k, bare.gpu[k]])) }));
  writeFileSync(join(copy, 'profiles', name), JSON.stringify({ ...stored, gpu: { ...stored.gpu, ...Object.fromEntries(keys.map((k) => [k, bare.gpu[k]])) }, sources: { ...stored.sources, ...Object.fromEntries(keys.map((k) => [`gpu.${k}`, bare.sources[`gpu.${k}`]])) } }, null, 2) + '\n');
}
