/**
 * Before/after measurements of SynapseVM on the 2k quickstart settings (examples/quickstart.json up
 * to commit 722f875: the two bundled 2k traces, budgets 10/20/40%, h100-pcie5 and a100-pcie4). Run from the repository root:
 *   npx tsx docs/seed-synapsevm/measure.ts [--before c2e4f49] [--opt key=value ...] [--trace path --model m]
 * --before COMMIT measures that commit's policies/synapsevm.ts instead (loaded from git, registered
 * under its own name, on the current simulator). One JSON line per run. Forecast recall in predictive
 * mode is measured by feeding the policy's audit the trace's true attention (the policy cannot see
 * skipped blocks; its decisions never read the audit).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { registerBuiltinPolicies } from '../../policies/builtin.js';
import { registerPolicy } from '../../policies/registry.js';
import { simulate } from '../../sim/run.js';
import { QualityMeter } from '../../sim/quality/quality-meter.js';
import { rowUniform } from '../../sim/group-mean.js';
import type { LayerAttention } from '../../traces/format.js';

const args = process.argv.slice(2);
const opt = (k: string) => (args.includes(k) ? args[args.indexOf(k) + 1] : undefined);
const before = opt('--before');
const options: Record<string, string> = {};
args.forEach((a, i) => {
  if (a === '--opt') {
    const [k, v] = args[i + 1].split('=');
    options[k] = v;
  }
});
const root = resolve(import.meta.dirname, '../..');
const traces = opt('--trace') ? [opt('--trace')!] : ['llama-3-8b-2k-default', 'llama-3-8b-2k-needle'].map((t) => join(root, 'traces/bundled', `${t}.kvt`));
const hardware = (opt('--hardware') ?? 'h100-pcie5,a100-pcie4').split(',');
const budgets = (opt('--budgets') ?? '10%,20%,40%').split(',');

registerBuiltinPolicies();
let policy = 'synapsevm';
if (before) {
  const src = execFileSync('git', ['show', `${before}:policies/synapsevm.ts`], { cwd: root, encoding: 'utf8' })
    .replace(/from '\.\/([^']+)'/g, (_, f) => `from '${pathToFileURL(join(root, 'policies', f)).href}'`)
    .replace("name: 'synapsevm'", "name: 'synapsevm-before'");
  const file = join(mkdtempSync(join(tmpdir(), 'svm-before-')), 'synapsevm-before.ts');
  writeFileSync(file, src);
  const mod = await import(pathToFileURL(file).href);
  registerPolicy({ ...mod.synapseVm, name: 'synapsevm-before' });
  policy = 'synapsevm-before';
}

// the true attention of every layer, handed to the policy's forecast audit (measurement only)
const layer = QualityMeter.prototype.layer;
QualityMeter.prototype.layer = function (this: { policy: { auditTrueAttention?: Function } }, step: number, l: number, obs: unknown, rows: readonly LayerAttention[]) {
  const audit = this.policy.auditTrueAttention;
  if (audit && step >= 0) {
    const n = rows[0].nBlocks;
    const mass = new Float64Array(n);
    for (const la of rows) {
      const u = la.idx ? rowUniform(la) : 0;
      const part = new Float64Array(n).fill(u);
      if (la.idx) la.idx.forEach((b, i) => (part[b] = la.mass[i]));
      else part.set(la.mass.subarray(0, n));
      for (let b = 0; b < n; b++) mass[b] += part[b] / rows.length;
    }
    audit.call(this.policy, step, l, n, (b: number) => mass[b]);
  }
  return layer.call(this as never, step, l, obs as never, rows as never);
} as typeof layer;

for (const hw of hardware) {
  for (const trace of traces) {
    for (const hbm_budget of budgets) {
      const r = simulate({ trace, policy, policy_options: options, hardware: hw, hbm_budget, trace_steps: 0, model: opt('--model') });
      const s = r.summary;
      const p = s.policy_report ?? {};
      const pick = (k: string) => (p[k] === undefined ? null : Number(p[k].toFixed(3)));
      console.log(JSON.stringify({
        policy, options, hardware: hw, trace: s.trace, budget: hbm_budget,
        tbt_p50_ms: Number(s.tbt_ms.p50.toFixed(3)), tbt_p99_ms: Number(s.tbt_ms.p99.toFixed(3)),
        masking: Number(s.masking_efficiency.toFixed(4)), recall: Number(s.attention_recall.mean.toFixed(4)), recall_min: Number(s.attention_recall.min.toFixed(4)),
        bytes_GB: Number((s.bytes_total / 1e9).toFixed(3)), quant_error: Number((s as any).quant_error?.mean?.toFixed(4) ?? NaN),
        needle_degraded_active: (s as any).needle?.degraded_active_steps ?? null, needle_unavailable_active: (s as any).needle?.unavailable_active_steps ?? null,
        fc_precision: pick('forecast_precision'), fc_recall: pick('forecast_recall'),
        fc_precision_step_min: pick('forecast_precision_step_min'), fc_precision_step_median: pick('forecast_precision_step_median'),
        fc_recall_step_min: pick('forecast_recall_step_min'), fc_recall_step_median: pick('forecast_recall_step_median'),
        promoted_back: p.promoted_back ?? null, fetched_nvme: p['fetched_on_demand_blocks.nvme'] ?? null, fetched_dram: p['fetched_on_demand_blocks.dram'] ?? null,
      }));
    }
  }
}
