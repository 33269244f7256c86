// DPNC's replay of the policy-speed bench trace at several training-sample rates, each replay
// interleaved with an H2O replay in this one process (as perf/policy-speed.bench.ts times policies):
// per rate the median CPU seconds (user + system), the ratio to the median of the H2O runs
// interleaved with it, the digest of summary and steps, and DPNC's report. Runs the compiled
// simulator: `npx tsc -p tsconfig.json` first.
//
//   node lab/data/dpnc-lazy-rows/speed.mjs RATES [ROUNDS] [OUT.jsonl]
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { registerBuiltinPolicies } from '../../../dist/policies/builtin.js';
import { simulate } from '../../../dist/sim/run.js';

registerBuiltinPolicies();
const rates = (process.argv[2] ?? '1').split(',').map(Number);
const rounds = Number(process.argv[3] ?? 3);
const out = process.argv[4];
const trace = path.join(os.tmpdir(), 'kvtier-bench-llama3-8b-32768-1000-topk.kvt');
if (!fs.existsSync(trace)) throw new Error(`${trace} missing: npx tsx perf/policy-speed.bench.ts --policies h2o makes it`);
const timed = (policy, options) => {
  const c0 = process.cpuUsage();
  const r = simulate({ trace, policy, policy_options: options, hardware: 'h100-pcie5', hbm_budget: '20%', trace_steps: 0 });
  const c = process.cpuUsage(c0);
  const digest = createHash('sha256').update(JSON.stringify(r.summary)).update(JSON.stringify(r.steps)).digest('hex').slice(0, 12);
  return { s: (c.user + c.system) / 1e6, digest, summary: r.summary };
};
const median = (xs) => {
  const a = [...xs].sort((x, y) => x - y);
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
};
timed('h2o', {});
for (const rate of rates) {
  const mine = [];
  const base = [];
  let last;
  for (let k = 0; k < rounds; k++) {
    base.push(timed('h2o', {}).s);
    last = timed('dpnc', { train_rate: rate });
    mine.push(last.s);
  }
  const pr = last.summary.policy_report;
  const row = { rate, rounds, dpnc_cpu_s: median(mine), h2o_cpu_s: median(base), ratio: median(mine) / median(base), dpnc_runs: mine, h2o_runs: base, digest: last.digest, recall: last.summary.attention_recall.mean, tbt_p50_ms: last.summary.tbt_ms.p50, ...pr };
  console.log(`rate ${rate}: dpnc ${row.dpnc_cpu_s.toFixed(3)} s, h2o ${row.h2o_cpu_s.toFixed(3)} s, ${row.ratio.toFixed(1)}x, digest ${row.digest}, recall ${row.recall.toFixed(4)}, learned ${pr.training_samples}, prefetches ${pr.prefetches}`);
  if (out) fs.appendFileSync(out, JSON.stringify(row) + '\n');
}
