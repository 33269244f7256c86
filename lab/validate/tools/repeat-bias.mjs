// Across stored validation runs of the same grid layout (seeds differ): per cell (its id without the seed), the
// simulated mean against the hardware's, 100 * (sim mean / hw mean - 1), in each run, and how many runs put it past
// a limit on the same side. Cells off by more than the limit on the same side in at least MIN runs are listed.
//   node lab/validate/tools/repeat-bias.mjs LIMIT_PCT MIN RUN_DIR...
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
const [limitArg, minArg, ...dirs] = process.argv.slice(2);
const limit = Number(limitArg);
const min = Number(minArg);
if (!(limit > 0) || !(min >= 1) || dirs.length === 0) {
  console.error('usage: node lab/validate/tools/repeat-bias.mjs LIMIT_PCT MIN RUN_DIR... (LIMIT_PCT > 0, MIN >= 1)');
  process.exit(2);
}
const byCell = new Map();
const names = [];
for (const d of dirs) {
  const v = JSON.parse(readFileSync(join(d, 'validate.json'), 'utf8'));
  const name = d.replace(/\/$/, '').split('/').pop();
  names.push(name);
  for (const c of v.cells) {
    if (c.status !== 'ok' || !c.sim_dist || !c.hw_dist) continue;
    const key = c.id.replace(/^\d+_/, '').replace(/-s\d+(?=_)/, '');
    if (!byCell.has(key)) byCell.set(key, new Map());
    byCell.get(key).set(name, { err: 100 * (c.sim_dist.mean / c.hw_dist.mean - 1), pool: c.pool });
  }
}
console.log(`| cell | pool | runs | slow past ${limit}% | fast past ${limit}% | median | per run |`);
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const [key, runs] of [...byCell].sort((a, b) => a[0].localeCompare(b[0]))) {
  const xs = names.filter((n) => runs.has(n)).map((n) => runs.get(n).err);
  const slow = xs.filter((x) => x > limit).length;
  const fast = xs.filter((x) => x < -limit).length;
  if (Math.max(slow, fast) < min) continue;
  const s = [...xs].sort((a, b) => a - b);
  const med = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  console.log(`| ${key} | ${[...runs.values()][0].pool} | ${xs.length} | ${slow} | ${fast} | ${med.toFixed(1)} | ${xs.map((x) => x.toFixed(1)).join(', ')} |`);
}
