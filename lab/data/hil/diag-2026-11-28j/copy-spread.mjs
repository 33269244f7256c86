// Per data-moving cell of a stored validation run (generated traces, no file tier): the host's cost per copy as the
// hardware's runs issued the step (its host issue time less its other ops at the run's calibrated costs, over its
// copies), against how far apart the copies' host addresses lie (per step, the median over consecutive host-side
// copies of log2(1 + |offset change| / slot size)), and the step as the simulator and the hardware give it. One JSON
// line per cell, medians over the steps after the first and both runs.
//   node copy-spread.mjs DIST RUN_DIR [ID_SUBSTRING]
import { readFileSync, mkdtempSync, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
const [dist, dir, only] = process.argv.slice(2);
if (!dir || !existsSync(join(dir, 'validate.json'))) throw new Error('usage: node copy-spread.mjs DIST RUN_DIR [ID_SUBSTRING]');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { recordAndLower } = await load('hil/executor/hil-run.js');
const { planOpKind } = await load('hil/bench/plan-issue-bench.js');
const { expandGrid } = await load('hil/validate/grid.js');
const { traceFile, cellRunConfig } = await load('hil/validate/validate.js');
const { readTraceHeader } = await load('traces/trace-reader.js');
const v = JSON.parse(readFileSync(join(dir, 'validate.json'), 'utf8'));
const g = v.grid;
const fix = (p) => (p && p.includes('/') && !existsSync(p) ? resolve('lab/validate', p) : p);
const cells = new Map(expandGrid(g, (t) => readTraceHeader(fix(t.path)).prompt_tokens).map((c) => [c.id, c]));
const tmp = mkdtempSync(join(tmpdir(), 'spread-'));
mkdirSync(join(tmp, 'traces'));
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n ? (n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) : NaN; };
const HOST = new Set(['dram', 'cxl']);
for (const r of v.cells) {
  if (r.status !== 'ok' || r.pool !== 'moving' || r.trace_kind === 'captured' || (only && !r.id.includes(only))) continue;
  const c = cells.get(r.id);
  const prof = join(dir, 'profiles', v.profiles.find((p) => p.model === r.model).file.split('/').pop());
  const gp = JSON.parse(readFileSync(prof, 'utf8')).gpu;
  const cost = { record: gp.issue_record_us, kernel: gp.issue_kernel_us, convert: gp.issue_convert_us ?? gp.issue_kernel_us, attention: gp.issue_attention_us, other: 0 };
  const t = traceFile(c, g, tmp);
  const { lowered } = recordAndLower(cellRunConfig(c, t, prof), { backend: 'cuda' });
  const slot = lowered.slotBytes;
  const per = [];
  const spreads = [];
  const copies = [];
  lowered.steps.forEach((s, i) => {
    if (i === 0) return;
    const n = { copy: 0, record: 0, kernel: 0, convert: 0, attention: 0, other: 0 };
    for (const op of s.ops) n[planOpKind(op)]++;
    if (n.other > 0 || n.copy < 16) return;
    const others = n.record * cost.record + n.kernel * cost.kernel + n.convert * cost.convert + n.attention * cost.attention;
    const ds = [];
    let prev = -1;
    for (const op of s.ops) {
      if (op.o !== 'copy') continue;
      const off = HOST.has(op.src) ? op.srcOff : HOST.has(op.dst) ? op.dstOff : -1;
      if (off < 0) continue;
      if (prev >= 0) ds.push(Math.log2(1 + Math.abs(off - prev) / slot));
      prev = off;
    }
    spreads.push(median(ds));
    copies.push(n.copy);
    for (let k = 0; k < r.hw_host_issue_ms.length; k++) per.push({ perCopy: (r.hw_host_issue_ms[k][i] * 1000 - others) / n.copy, issueOverStep: r.hw_host_issue_ms[k][i] / r.hw_ms[k][i] });
  });
  if (!per.length) continue;
  console.log(JSON.stringify({ id: r.id.slice(5), copies: median(copies), spread: +median(spreads).toFixed(2), calibrated_copy_us: gp.issue_copy_us, hw_copy_us: +median(per.map((x) => x.perCopy)).toFixed(2), issue_over_step: +median(per.map((x) => x.issueOverStep)).toFixed(3), sim_vs_hw_mean: +(100 * (r.sim_dist.mean / r.hw_dist.mean - 1)).toFixed(1) }));
}
