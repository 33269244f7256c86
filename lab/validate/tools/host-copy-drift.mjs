/**
 * For the cells of a `kvtier hil validate` run whose steps the host's issue decides (a run's host issue
 * time within 2% of its measured step on the median step), the host's time per copy each such run
 * implies against the calibrated one (the least and the most over the cell's host-bound runs): each cell's plan is lowered again (recordAndLower on the cell's settings
 * and the run's profile, as validate-resim simulates it), and per step the runs' host issue time less
 * its marks, waits, kernels, conversions and attention launches at the profile's issue costs is divided
 * by its lowered copies (hil/bench/plan-issue-bench.ts copyCostFromPlan, the first step left out). The
 * last column is the simulated mean step time over the measured one.
 *   node lab/validate/tools/host-copy-drift.mjs RUN_DIR   (after npx tsc: uses dist/; regenerates the
 *   run's generated traces under /tmp/host-copy-drift-traces)
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const D = path.join(root, 'dist');
const { expandGrid } = await import(path.join(D, 'hil/validate/grid.js'));
const { cellRunConfig, traceFile } = await import(path.join(D, 'hil/validate/validate.js'));
const { recordAndLower } = await import(path.join(D, 'hil/executor/hil-run.js'));
const { planOpKind, copyCostFromPlan } = await import(path.join(D, 'hil/bench/plan-issue-bench.js'));
const { resimulate } = await import(path.join(D, 'hil/validate/resimulate.js'));
const dir = process.argv[2];
if (!dir || !fs.existsSync(path.join(dir, 'validate.json'))) {
  console.error('usage: node lab/validate/tools/host-copy-drift.mjs RUN_DIR (RUN_DIR holds validate.json)');
  process.exit(2);
}
const run = JSON.parse(fs.readFileSync(path.join(dir, 'validate.json'), 'utf8'));
// the generated traces: validate-resim writes them into its output
const tmp = '/tmp/host-copy-drift-traces';
resimulate({ dir, out: tmp, force: true });
const grid = run.grid;
const cells = expandGrid(grid, () => 8192);
console.log('| cell | copies a step | host us per copy: calibrated / host-bound runs imply (least-most) | implied over calibrated | simulated / measured mean |');
console.log('| --- | --- | --- | --- | --- |');
for (const r of run.cells) {
  if (r.status !== 'ok' || !r.hw_host_issue_ms || !r.hw_median_ms) continue;
  const mid = Math.floor(r.hw_median_ms.length / 2);
  const bound = r.hw_host_issue_ms.map((x, k) => x[mid] >= 0.98 * r.hw_ms[k][mid]);
  if (!bound.some((x) => x)) continue;
  const c = cells.find((x) => x.id === r.id);
  if (!c) continue;
  const profName = path.basename(c.model).replace(/\.model\.json$/, '').replace(/\.json$/, '');
  const prof = path.join(dir, 'profiles', `${profName}.json`);
  if (!fs.existsSync(prof)) continue;
  const gpu = JSON.parse(fs.readFileSync(prof, 'utf8')).gpu;
  const cfg = cellRunConfig(c, traceFile(c, grid, tmp), prof);
  const { lowered } = recordAndLower(cfg, { backend: 'cuda' });
  const perRun = r.hw_host_issue_ms.filter((_, k) => bound[k]).map((issueMs) => {
    const steps = lowered.steps.map((s, i) => {
      const ops = { copy: 0, record: 0, kernel: 0, convert: 0, attention: 0, other: 0 };
      for (const op of s.ops) ops[planOpKind(op)]++;
      return { step: i, issue_us: issueMs[i] * 1e3, ops };
    });
    return copyCostFromPlan(steps, { record: gpu.issue_record_us, kernel: gpu.issue_kernel_us, attention: gpu.issue_attention_us ?? gpu.issue_kernel_us, convert: gpu.issue_convert_us });
  });
  const implied = perRun.map((x) => x.us).sort((a, b) => a - b);
  const lo = implied[0];
  const hi = implied[implied.length - 1];
  const s = r.sim_ms.slice(run.skip_steps ?? 1);
  const h = r.hw_median_ms.slice(run.skip_steps ?? 1);
  const mean = s.reduce((a, b) => a + b, 0) / h.reduce((a, b) => a + b, 0) - 1;
  const sign = (x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}%`;
  console.log(`| ${r.id.replace(/^\d+_/, '')} | ${perRun[0].copies.toFixed(0)} | ${gpu.issue_copy_us.toFixed(2)} / ${lo.toFixed(2)}${hi !== lo ? `-${hi.toFixed(2)}` : ''} (${perRun.length} of ${bound.length} runs) | ${sign(lo / gpu.issue_copy_us - 1)}${hi !== lo ? ` to ${sign(hi / gpu.issue_copy_us - 1)}` : ''} | ${sign(mean)} |`);
}
