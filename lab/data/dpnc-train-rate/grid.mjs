// DPNC at several training-sample rates (policy option train_rate): one JSON line per (trace,
// budget, rate) run, appended to OUT. Runs the compiled simulator: `npx tsc -p tsconfig.json` first.
//
//   node lab/data/dpnc-train-rate/grid.mjs OUT.jsonl RATES TRACE[:MODEL] ...
//   env: BUDGETS (default 10%,20%,40%), HW (hardware, default dpnc-4tier), OPTS (other dpnc options, JSON)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { registerBuiltinPolicies } from '../../../dist/policies/builtin.js';
import { simulate } from '../../../dist/sim/run.js';

registerBuiltinPolicies();
const [out, rateArg, ...traces] = process.argv.slice(2);
if (!out || !rateArg || traces.length === 0) throw new Error('usage: grid.mjs OUT.jsonl RATES TRACE[:MODEL] ...');
const rates = rateArg.split(',').map(Number);
const budgets = (process.env.BUDGETS ?? '10%,20%,40%').split(',');
const hardware = process.env.HW ?? 'dpnc-4tier';
const options = JSON.parse(process.env.OPTS ?? '{}');
for (const spec of traces) {
  const [trace, model] = spec.split(':');
  for (const budget of budgets) {
    for (const rate of rates) {
      const c0 = process.cpuUsage();
      const r = simulate({ trace, model, policy: 'dpnc', policy_options: { ...options, train_rate: rate }, hardware, hbm_budget: budget, trace_steps: 0 });
      const c = process.cpuUsage(c0);
      const s = r.summary;
      const row = {
        trace: path.basename(trace),
        budget,
        rate,
        options,
        hardware,
        cpu_s: (c.user + c.system) / 1e6,
        recall: s.attention_recall.mean,
        tbt_p50_ms: s.tbt_ms.p50,
        tbt_p99_ms: s.tbt_ms.p99,
        needle_retained: s.needle_retained,
        bytes_total: s.bytes_total,
        ...s.policy_report,
      };
      fs.appendFileSync(out, JSON.stringify(row) + '\n');
      console.log(row.trace, budget, rate, row.cpu_s.toFixed(2), row.recall.toFixed(4), row.prefetch_recall, row.prefetch_precision, row.prefetches);
    }
  }
}
