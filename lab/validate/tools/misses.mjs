/**
 * Every cell of a `kvtier hil validate` run that misses its targets, with what tells the causes apart:
 * the strict per-step error, the hardware's own run-to-run spread, the error over the steps the runs
 * repeat (within 2% of each other) with its sign (simulated over measured: + the simulator slow), the
 * simulated / measured mean, and (with --other DIR, a `validate-resim` of the same run with another
 * lease's profiles) the error over the repeated steps priced with those.
 * A reading of each cell, from these columns only, the first that applies:
 *   storage          - the cell moves data to or from the storage tier (a virtio disk on the lent GPUs);
 *   runs disagree    - on the steps the runs repeat the cell meets its targets, and its strict p95 is
 *                      within the runs' own spread p95: the miss is the hardware's slow steps;
 *   stand-in         - the cell moves data to or from a tier the machine does not have (the run's tiers
 *                      say "simulated only"), which the HIL holds in pinned host memory (CXL) or the file
 *                      tier (HDD): the hardware times its stand-in, not the link the simulator prices;
 *   calibration      - priced with the other lease's profiles, the repeated steps meet the median
 *                      target where this lease's profiles do not;
 *   model            - the runs agree (spread p95 under 2%) and the repeated steps miss;
 *   bias             - the repeated steps miss with one sign (the simulator slow or fast by the median
 *                      shown), beside slow steps of the runs;
 *   mixed            - none of these.
 * Then, for storage cells whose runs kept the file tier's times, per run the median step's file reads,
 * writes and memory-stream synchronizations.
 *   node lab/validate/tools/misses.mjs RUN_DIR [--other RESIM_DIR] [--generated]   (after npx tsc: uses dist/)
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const { medianP95, repeatableSteps } = await import(path.join(root, 'dist/hil/validate/stats.js'));
const { movesTo } = await import(path.join(root, 'dist/hil/validate/validate.js'));
const { hasNoHardware } = await import(path.join(root, 'dist/hil/validate/tier-devices.js'));
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
const skip = run.skip_steps ?? 1;
const pct = (x) => (x === null || x === undefined || Number.isNaN(x) ? '-' : (100 * x).toFixed(2));
const signed = (x) => (Number.isNaN(x) ? '-' : `${x >= 0 ? '+' : ''}${(100 * x).toFixed(2)}`);
/** over the steps the runs repeat: n, median and p95 |error|, median signed error (simulated over the runs' median) */
function repeated(c) {
  const runs = c.hw_ms.map((r) => r.slice(skip));
  const sim = c.sim_ms.slice(skip);
  const hw = c.hw_median_ms.slice(skip);
  const ok = repeatableSteps(runs);
  const e = sim.map((s, i) => s / hw[i] - 1).filter((_, i) => ok[i]);
  const abs = e.length ? medianP95(e.map(Math.abs)) : { median: Number.NaN, p95: Number.NaN };
  return { n: e.length, median: abs.median, p95: abs.p95, bias: e.length ? medianP95(e).median : Number.NaN };
}
// tiers the machine does not have (the HIL stands them in with host memory or the file tier)
const standIn = (run.tiers ?? []).filter((t) => hasNoHardware(t.kind)).map((t) => t.tier);
const touchesStandIn = (c) => movesTo(c.sim_bytes, standIn);
const rows = [];
const counts = {};
for (const c of run.cells) {
  if (c.status !== 'ok' || !c.judgement || c.judgement.pass) continue;
  if (generated && c.trace_kind !== 'generated') continue;
  const t = c.pool === 'non-moving' ? run.targets.non_moving : run.targets.moving;
  const rep = repeated(c);
  const o = other?.get(c.id);
  const orep = o ? repeated(o) : null;
  const mean = c.sim_dist.mean / c.hw_dist.mean - 1;
  const repMisses = !(rep.n > 0 && rep.median <= t.median && rep.p95 <= t.p95);
  let why = 'mixed';
  if (c.pool === 'storage') why = 'storage';
  else if (!repMisses && c.error.p95 <= c.spread.p95) why = 'runs disagree';
  else if (touchesStandIn(c)) why = 'stand-in';
  else if (orep && orep.n > 0 && orep.median <= t.median && rep.median > t.median) why = 'calibration';
  else if (c.spread.p95 < 0.02 && repMisses) why = 'model';
  else if (rep.n > 0 && rep.median > t.median && Math.abs(rep.bias) >= 0.8 * rep.median) why = `bias ${signed(rep.bias)}%`;
  const key = why.startsWith('bias') ? 'bias' : why;
  counts[key] = (counts[key] ?? 0) + 1;
  rows.push(`| ${c.trace} ${c.label} ${c.budget} | ${c.pool} | ${pct(c.error.median)} / ${pct(c.error.p95)} | ${pct(c.spread.median)} / ${pct(c.spread.p95)} | ${pct(rep.median)} / ${pct(rep.p95)}, ${signed(rep.bias)} (${rep.n} of ${c.error.n}) | ${signed(mean)} |${other ? ` ${orep ? `${pct(orep.median)} / ${pct(orep.p95)}, ${signed(orep.bias)}` : '-'} |` : ''} ${why} |`);
}
console.log(`| cell | pool | strict median / p95 % | runs' spread % | repeated steps: median / p95 %, signed median | sim / hw mean % |${other ? ' repeated steps, other profiles |' : ''} reading |`);
console.log(`| --- | --- | --- | --- | --- | --- |${other ? ' --- |' : ''} --- |`);
for (const r of rows) console.log(r);
console.log(`\n${rows.length} cells miss: ${Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ')}`);
// storage cells whose runs kept the file tier's times (hw_file): per step, the median over steps of
// each run's reads, read joins (where kept), writes and memory-stream synchronizations, against the measured step
const files = run.cells.filter((c) => c.status === 'ok' && c.hw_file && (!generated || c.trace_kind === 'generated'));
if (files.length) {
  const med = (xs) => (xs.length ? medianP95(xs).median : Number.NaN);
  const ms = (x) => (Number.isNaN(x) ? '-' : x.toFixed(2));
  console.log('\n| storage cell | run | step ms | file reads ms | read joins ms | writes ms | syncs ms (count) | storage bytes read per step |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const c of files) {
    const perStep = (c.hw_bytes?.['nvme:nvme->dram'] ?? 0) / c.steps.length;
    c.hw_ms.forEach((steps, k) => {
      const f = (a) => med(a[k].slice(skip));
      console.log(`| ${c.trace} ${c.label} ${c.budget} | ${k + 1} | ${ms(med(steps.slice(skip)))} | ${ms(f(c.hw_file.read_ms))} | ${c.hw_file.join_ms ? ms(f(c.hw_file.join_ms)) : '-'} | ${ms(f(c.hw_file.write_ms))} | ${ms(f(c.hw_file.sync_ms))} (${f(c.hw_file.syncs)}) | ${(perStep / 2 ** 20).toFixed(1)} MiB |`);
    });
  }
}
