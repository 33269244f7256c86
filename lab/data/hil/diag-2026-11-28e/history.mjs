// There (the GPU machine): SmartKV's re-bucketing step (the last of 16) in a fresh process and after the
// process has done other work, to tell a process's history from the step's own cost. MODE:
//   fresh    SmartKV 20% twice
//   ballast  SmartKV 20% twice, then 25 arrays of 2^20 small JS objects held (about 1.8 GiB of heap), then SmartKV 20% twice
//   history  SmartKV 20% twice, then one run each of other policies' plans, then SmartKV 20% twice
//   many     SmartKV 20% RUNS times (default 6)
// Each SmartKV run prints steps 1, 14 and 15: latency and the host's issue time (ms), and the heap in use.
//   node history.mjs DIST TRACE PROFILE MODE
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const [dist, trace, profile, mode] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { registerBuiltinPolicies } = await load('policies/builtin.js');
const { hilRun } = await load('hil/executor/hil-run.js');
registerBuiltinPolicies();
const cfg = (policy, budget = '20%', options = {}) => ({ trace: resolve(trace), policy, policy_options: options, hardware: resolve(profile), hbm_budget: budget, group_size: 128 });
const o = { backend: 'cuda', seed: 1, nvmeDir: '/tmp', ioThreads: 32 };
const smartkv = async (label, n = 2) => {
  for (let k = 0; k < n; k++) {
    const r = await hilRun(cfg('smartkv'), o);
    const s = r.result.steps;
    const h = r.hil.steps;
    const f = (i) => `${s[i].latency_ms.toFixed(2)}/${(h[i].host_issue_us / 1e3).toFixed(2)}`;
    console.log(`${mode} ${label} run ${k}: latency/issue ms: step 1 ${f(1)}, 14 ${f(14)}, 15 ${f(15)}; heap ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB`);
  }
};
await smartkv('first', mode === 'many' ? Number(process.env.RUNS ?? 6) : 2);
let keep = [];
if (mode === 'ballast') {
  for (let i = 0; i < 25; i++) {
    const a = new Array(1 << 20);
    for (let j = 0; j < a.length; j++) a[j] = { i: j, s: `x${j}` };
    keep.push(a);
  }
  await smartkv('after ballast');
} else if (mode === 'history') {
  for (const [p, b, opt] of [['kivi', '10%'], ['quest', '20%'], ['lru-offload', '10%'], ['lru-offload', '20%', { offload_tier: 'nvme' }], ['synapsevm', '20%'], ['slep', '20%'], ['infinigen', '20%'], ['uniform-int8', '40%'], ['dpnc', '20%']]) {
    const t0 = performance.now();
    await hilRun(cfg(p, b, opt ?? {}), o);
    console.log(`  ${p} ${b} ${JSON.stringify(opt ?? {})}: ${((performance.now() - t0) / 1e3).toFixed(1)} s`);
  }
  await smartkv('after history');
}
console.log(keep.length ? `(ballast ${keep.length} arrays)` : '');
