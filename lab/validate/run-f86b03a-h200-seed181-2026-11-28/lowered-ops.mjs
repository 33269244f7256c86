// Offline (no GPU): a cell's plan as the executor lowers it (hil/executor/hil-run.ts recordAndLower), its ops by
// kind in steps 1, 14 and 15 (the re-bucketing step of SmartKV's 8k cells).
//   node lab/validate/run-f86b03a-h200-seed181-2026-11-28/lowered-ops.mjs TRACE POLICY BUDGET PROFILE   (after npm run build)
// e.g. TRACE /tmp/resim181-disk/traces/broad-every-policy-llama-3-8b-8k-s181.kvt, smartkv, 20%, this run's profiles/llama-3-8b.json
import { registerBuiltinPolicies } from '../../../dist/policies/builtin.js';
import { recordAndLower } from '../../../dist/hil/executor/hil-run.js';
import { planOpKind } from '../../../dist/hil/bench/plan-issue-bench.js';
registerBuiltinPolicies();
const [trace, policy, budget, hw] = process.argv.slice(2);
const { lowered } = recordAndLower({ trace, policy, hardware: hw, hbm_budget: budget, trace_steps: 0 }, { backend: 'cuda' });
const steps = lowered.plan?.steps ?? lowered.steps;
for (const s of [1, 14, 15]) {
  const ops = steps[s].ops; const c = {}; const raw = {};
  for (const op of ops) { const k = planOpKind(op); c[k] = (c[k] || 0) + 1; raw[op.o] = (raw[op.o] || 0) + 1; }
  console.log(s, ops.length, JSON.stringify(c), JSON.stringify(raw));
}
