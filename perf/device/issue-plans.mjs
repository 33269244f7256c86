// On the GPU machine (plain node, compiled JS): the host's issue time per step of several whole plans run
// by the executor in turn on one lease (hil/bench/plan-issue-bench.ts), ROUNDS rounds, with the issue
// bench's costs of the other op kinds timed before and after; per plan the host's time per copy by the
// calibration's arithmetic (copyCostFromPlan), the other ops at their costs in a row (the calibration now
// puts those at the launch pace of a plan that moves nothing first, which this script does not time). The plans: the calibration's (KIVI 10% at
// 40,960 tokens) and the copy-bound cells of the validation grids (KIVI 10%, uniform INT8 10/20/40%,
// SynapseVM 40% at 8k; SmartKV 10% at 32k), Llama-3-8B, generated broad traces, 12 steps each.
// PLANS="policy:budget:context,..." runs those plans in place of the list below; each run keeps its start time
// and the host's steal and busy jiffies over it (/proc/stat), so a slow round can be set beside the VM's state.
//   node perf/device/issue-plans.mjs DIST OUT_JSON [ROUNDS]     (KVTIER_HIL_ADDON names the addon)
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, outFile, roundsArg] = process.argv.slice(2);
if (!dist || !outFile) throw new Error('usage: node perf/device/issue-plans.mjs DIST OUT_JSON [ROUNDS]');
const rounds = Number(roundsArg ?? 2);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`issue-plans: ROUNDS must be a whole number >= 1 (got "${roundsArg}")`);
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { benchPlanIssue, copyCostFromPlan } = await load('hil/bench/plan-issue-bench.js');
const { benchIssue } = await load('hil/bench/issue-bench.js');
const { issueCostsOf } = await load('hil/calibrate/measure.js');
const { loadModel } = await load('sim/models/load-model.js');

const model = 'llama-3-8b';
const m = loadModel(model);
const geometry = { blockTokens: 16, groupSize: 128 };
const listed = process.env.PLANS?.split(',').map((x) => {
  const [policy, budget, ctx] = x.split(':');
  if (!policy || !budget?.endsWith('%') || !(Number(ctx) > 0)) throw new Error(`issue-plans: PLANS entry "${x}" is not policy:budget%:context`);
  return [policy, budget, Number(ctx)];
});
/** the whole machine's cpu jiffies from /proc/stat: busy (user+nice+system+irq+softirq), steal, all */
const cpuJiffies = () => {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { busy: f[0] + f[1] + f[2] + f[5] + f[6], steal: f[7] ?? 0, all: f.reduce((a, x) => a + x, 0) };
};
const plans = listed ?? [
  ['kivi', '10%', 40960],
  ['kivi', '10%', 8192],
  ['uniform-int8', '10%', 8192],
  ['uniform-int8', '20%', 8192],
  ['uniform-int8', '40%', 8192],
  ['synapsevm', '40%', 8192],
  ['smartkv', '10%', 32768],
];
const b = openBackend('cuda');
const out = { device: b.info().name, at: new Date().toISOString(), costs: [], runs: [] };
try {
  const costs = async () => issueCostsOf(await benchIssue(b, m, { ...geometry, copyBytes: [17408] }));
  out.costs.push(await costs());
  console.log(`issue costs before: ${JSON.stringify(out.costs[0])}`);
  for (let r = 0; r < rounds; r++) {
    for (const [policy, budget, ctx] of plans) {
      const t0 = performance.now();
      const j0 = cpuJiffies();
      const res = await benchPlanIssue(b, { model, hardware: 'h100-pcie5', contextTokens: ctx, steps: 12, policy, budget, ...geometry, dir: '/tmp' });
      const j1 = cpuJiffies();
      const c = copyCostFromPlan(res.steps, out.costs[0]);
      const cpu = { busy: (j1.busy - j0.busy) / (j1.all - j0.all), steal: (j1.steal - j0.steal) / (j1.all - j0.all) };
      out.runs.push({ round: r, policy, budget, context: ctx, at: res.at, steps: res.steps, copy_us: c.us, copies: c.copies, cpu });
      console.log(`round ${r} ${policy} ${budget} ${ctx}: ${c.copies.toFixed(0)} copies a step, ${c.us.toFixed(3)} us per copy (${((performance.now() - t0) / 1000).toFixed(1)} s; machine busy ${(100 * cpu.busy).toFixed(1)}%, steal ${(100 * cpu.steal).toFixed(2)}%)`);
    }
  }
  out.costs.push(await costs());
  console.log(`issue costs after: ${JSON.stringify(out.costs[1])}`);
} finally {
  b.close();
  writeFileSync(outFile, JSON.stringify(out) + '\n');
}
