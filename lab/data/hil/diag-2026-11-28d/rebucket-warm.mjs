// There: SmartKV 8k 20% on the seed-181 grid's trace, three HIL runs in one process, step 14 and 15 (the
// re-bucketing step) of each; BACKEND (default cuda).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const [dist, trace, profile, budget = '20%'] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { registerBuiltinPolicies } = await load('policies/builtin.js');
const { hilRun } = await load('hil/executor/hil-run.js');
registerBuiltinPolicies();
const cfg = { trace: resolve(trace), policy: 'smartkv', hardware: resolve(profile), hbm_budget: budget, trace_steps: 0 };
for (let k = 0; k < Number(process.env.RUNS ?? 3); k++) {
  const t0 = performance.now();
  const r = await hilRun(cfg, { backend: process.env.BACKEND ?? 'cuda', seed: 1, nvmeDir: '/tmp' });
  const s = r.result.steps;
  const f = (i) => `${s[i].latency_ms.toFixed(2)} (stall ${s[i].stall_ms.toFixed(2)})`;
  console.log(`run ${k}: step 1 ${f(1)}, 14 ${f(14)}, 15 ${f(15)}; ${((performance.now() - t0) / 1000).toFixed(1)} s; CUDA_MODULE_LOADING=${process.env.CUDA_MODULE_LOADING ?? '(unset)'}`);
}
