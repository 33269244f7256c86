/**
 * Every cell of a `kvtier hil validate` run that misses its targets, with what tells the causes apart:
 * the strict per-step error, the hardware's own run-to-run spread, the error over the steps the runs
 * repeat (within 2% of each other), the simulated / measured mean, and (with --other DIR, a
 * `validate-resim` of the same run with another lease's profiles) the strict error priced with those.
 * A reading of each cell, from these columns only:
 *   runs disagree   - the strict p95 is within the runs' own spread p95 and the repeated steps pass;
 *   calibration     - priced with the other lease's profiles the cell passes;
 *   model           - the runs agree (spread p95 under 2%) and the error stays on the repeated steps;
 *   storage         - the cell moves data to or from the storage tier (a virtio disk on the lent GPUs);
 *   mixed           - none of these alone.
 *   node lab/validate/tools/misses.mjs RUN_DIR [--other RESIM_DIR] [--generated]   (after npx tsc: uses dist/)
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const { summarizeCells } = await import(path.join(root, 'dist/hil/validate/validate.js'));
const args = process.argv.slice(2);
const dir = args[0];
if (!dir || !fs.existsSync(path.join(dir, 'validate.json'))) {
  console.error('usage: node lab/validate/tools/misses.mjs RUN_DIR [--other RESIM_DIR] [--generated] (RUN_DIR holds validate.json)');
  process.exit(2);
}
const otherAt = args.indexOf('--other');
const load = (d) => JSON.parse(fs.readFileSync(path.join(d, 'validate.json'), 'utf8'));
const run = load(dir);
const other = otherAt >= 0 ? new Map(load(args[otherAt + 1]).cells.map((c) => [c.id, c])) : null;
const generated = args.includes('--generated');
const pct = (x) => (x === null || x === undefined || Number.isNaN(x) ? '-' : (100 * x).toFixed(2));
const rows = [];
const counts = {};
for (const c of run.cells) {
  if (c.status !== 'ok' || !c.judgement || c.judgement.pass) continue;
  if (generated && c.trace_kind !== 'generated') continue;
  const p = summarizeCells([c], 1).pools.find((x) => x.cells === 1);
  const rep = p.error_repeatable;
  const o = other?.get(c.id);
  const mean = c.sim_dist.mean / c.hw_dist.mean - 1;
  let why = 'mixed';
  if (c.pool === 'storage') why = 'storage';
  else if (o?.judgement?.pass) why = 'calibration';
  else if (c.error.p95 <= c.spread.p95 && rep.n > 0 && rep.median <= (c.pool === 'non-moving' ? 0.01 : 0.03) && rep.p95 <= (c.pool === 'non-moving' ? 0.02 : 0.08)) why = 'runs disagree';
  else if (c.spread.p95 < 0.02 && rep.median > (c.pool === 'non-moving' ? 0.01 : 0.03)) why = 'model';
  counts[why] = (counts[why] ?? 0) + 1;
  rows.push(`| ${c.trace} ${c.label} ${c.budget} | ${c.pool} | ${pct(c.error.median)} / ${pct(c.error.p95)} | ${pct(c.spread.median)} / ${pct(c.spread.p95)} | ${pct(rep.median)} / ${pct(rep.p95)} (${rep.n} of ${c.error.n}) | ${mean >= 0 ? '+' : ''}${pct(mean)} |${other ? ` ${o ? `${pct(o.error.median)} / ${pct(o.error.p95)}` : '-'} |` : ''} ${why} |`);
}
console.log(`| cell | pool | strict median / p95 % | runs' spread % | repeated steps % | sim / hw mean % |${other ? ' other profiles % |' : ''} reading |`);
console.log(`| --- | --- | --- | --- | --- | --- |${other ? ' --- |' : ''} --- |`);
for (const r of rows) console.log(r);
console.log(`\n${rows.length} cells miss: ${Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ')}`);
