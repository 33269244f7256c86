// Per cell of a stored validation run: the hardware's host issue time per step (hw_host_issue_ms, each
// run) against the sum of the step's lowered ops at the run's calibrated per-op issue costs (the
// listed costs: copies, records, kernels, conversions, attention launches), for the same plan the
// simulator and the HIL run. Steps 1.. only; steps whose ops include anything the host waits on (file
// requests, host conversions) are left out. Prints one JSON line per cell: the op counts of a typical
// step, the listed sum, the hardware's issue time, their ratio and the excess per op (medians over steps).
//   node issue-vs-listed.mjs DIST RUN_DIR [ID_SUBSTRING]
import { readFileSync, mkdtempSync, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
const [dist, dir, only] = process.argv.slice(2);
if (!dir || !existsSync(join(dir, 'validate.json'))) throw new Error('usage: node issue-vs-listed.mjs DIST RUN_DIR [ID_SUBSTRING] (RUN_DIR: a stored validation run, with its validate.json)');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { recordAndLower } = await load('hil/executor/hil-run.js');
const { planOpKind } = await load('hil/bench/plan-issue-bench.js');
const { expandGrid } = await load('hil/validate/grid.js');
const { traceFile, cellRunConfig } = await load('hil/validate/validate.js');
const { readTraceHeader } = await load('traces/trace-reader.js');
const v = JSON.parse(readFileSync(join(dir, 'validate.json'), 'utf8'));
const g = v.grid;
const base = resolve(dir);
const fix = (p) => (p && p.includes('/') && !existsSync(p) ? resolve('lab/validate', p) : p);
const cells = new Map(expandGrid(g, (t) => readTraceHeader(fix(t.path)).prompt_tokens).map((c) => [c.id, c]));
const tmp = mkdtempSync(join(tmpdir(), 'ivl-'));
mkdirSync(join(tmp, 'traces'));
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n ? (n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) : NaN; };
for (const r of v.cells) {
  if (r.status !== 'ok' || (only && !r.id.includes(only))) continue;
  const c = cells.get(r.id);
  const prof = join(base, 'profiles', (v.profiles.find((p) => p.model === r.model).file).split('/').pop());
  const gp = JSON.parse(readFileSync(prof, 'utf8')).gpu;
  const cost = { copy: gp.issue_copy_us, record: gp.issue_record_us, kernel: gp.issue_kernel_us, convert: gp.issue_convert_us ?? gp.issue_kernel_us, attention: gp.issue_attention_us, other: 0 };
  const t = c.trace.path ? traceFile({ ...c, trace: { ...c.trace, path: fix(c.trace.path) } }, g, tmp) : traceFile(c, g, tmp);
  const { lowered } = recordAndLower(cellRunConfig({ ...c, model: fix(c.model) }, t, prof), { backend: 'cuda' });
  const per = [];
  let counts;
  lowered.steps.forEach((s, i) => {
    if (i === 0) return;
    const n = { copy: 0, record: 0, kernel: 0, convert: 0, attention: 0, other: 0 };
    for (const op of s.ops) n[planOpKind(op)]++;
    if (n.other > 0) return;
    const listed = Object.keys(n).reduce((a, k) => a + n[k] * cost[k], 0);
    const ops = s.ops.length;
    for (const run of r.hw_host_issue_ms) per.push({ ratio: (run[i] * 1000) / listed, excess: (run[i] * 1000 - listed) / ops, listed, hw: run[i] * 1000 });
    counts = n;
  });
  console.log(JSON.stringify({ id: r.id, pool: r.pool, err: +(r.error.median * 100).toFixed(2), sign: Math.sign(median(r.sim_ms) - median(r.hw_median_ms)), steps: per.length, counts, listed_us: +median(per.map((x) => x.listed)).toFixed(1), hw_issue_us: +median(per.map((x) => x.hw)).toFixed(1), ratio: +median(per.map((x) => x.ratio)).toFixed(3), excess_per_op_us: +median(per.map((x) => x.excess)).toFixed(2) }));
}
