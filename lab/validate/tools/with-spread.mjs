// A copy of a validation run whose calibrated profiles price the spread of host slots: `spread_us` set on
// the hbm link's two directions of every profile (H2D into HBM, D2H out of it), everything else as stored.
// `kvtier hil validate-resim OUT` then gives the run's errors with that term (values from
// perf/device/host-span.mjs, timed apart from the run).
//   node lab/validate/tools/with-spread.mjs DIR OUT H2D_US D2H_US
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, out, h2dArg, d2hArg] = process.argv.slice(2);
const h2d = Number(h2dArg);
const d2h = Number(d2hArg);
if (!dir || !out || !(h2d >= 0) || !(d2h >= 0)) {
  console.error('usage: node lab/validate/tools/with-spread.mjs DIR OUT H2D_US D2H_US (a validation output directory, a new directory, us per doubling >= 0)');
  process.exit(2);
}
if (!existsSync(join(dir, 'validate.json')) || !existsSync(join(dir, 'profiles'))) {
  console.error(`with-spread: ${dir} has no validate.json and profiles/ (give a validation output directory)`);
  process.exit(2);
}
if (existsSync(out)) {
  console.error(`with-spread: ${out} exists (give a new directory)`);
  process.exit(2);
}
cpSync(dir, out, { recursive: true });
let n = 0;
for (const f of readdirSync(join(out, 'profiles'))) {
  if (!f.endsWith('.json') || f.endsWith('.fit.json')) continue;
  const file = join(out, 'profiles', f);
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const link = p.links?.find((k) => (k.a === 'hbm') !== (k.b === 'hbm'));
  if (!link) {
    console.error(`with-spread: ${file} has no link to hbm`);
    process.exit(1);
  }
  const intoHbm = link.b === 'hbm' ? 'a_to_b' : 'b_to_a';
  const outOfHbm = intoHbm === 'a_to_b' ? 'b_to_a' : 'a_to_b';
  link[intoHbm].spread_us = h2d;
  link[outOfHbm].spread_us = d2h;
  writeFileSync(file, JSON.stringify(p, null, 2) + '\n');
  n++;
}
console.log(`${out}: spread_us ${h2d} into HBM, ${d2h} out of it, in ${n} profiles`);
