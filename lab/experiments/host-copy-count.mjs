#!/usr/bin/env node
// Offline (no GPU): per step, the copies the simulator's host clock issues (SimExecutor.issueCopies'
// runs) against the copies the HIL executor issues for the same plan (its lowered copy ops), to find
// where the simulated host under-counts the executor's driver calls.
//   node lab/experiments/host-copy-count.mjs --trace T.kvt --hardware PROFILE [--policy lru-offload] [--budget 10%] [--model M] [--dist dist]
import { deviceArgs } from '../../perf/device-args.mjs';

const { opt, load } = deviceArgs('runs/host-copy-count');
const { simulate } = await load('sim/run.js');
const { SimExecutor } = await load('sim/sim-executor.js');
const { PlanRecorder } = await load('hil/executor/plan-recorder.js');
const { allLinkKeys } = await load('hil/executor/link-keys.js');
const { lowerPlan } = await load('hil/executor/lower-plan.js');

const config = { trace: opt('trace'), policy: opt('policy', 'lru-offload'), hardware: opt('hardware'), hbm_budget: opt('budget', '10%'), ...(opt('model', '') ? { model: opt('model', '') } : {}) };
let simCopies = 0;
const orig = SimExecutor.prototype.issueCopies;
SimExecutor.prototype.issueCopies = function (s, runs) {
  simCopies += runs;
  return orig.call(this, s, runs);
};
const r = simulate(config);
SimExecutor.prototype.issueCopies = orig;
let rec;
simulate(config, { executor: (res, cache) => (rec = new PlanRecorder(cache, allLinkKeys(res.hardware))) });
const { model, hardware, header } = r.resolved;
const low = lowerPlan(rec.plan, model, hardware, header.block_size, { slabBytes: 2 << 20, groupSize: Math.min(128, model.head_dim) });
const n = low.steps.length;
let lowCopies = 0;
for (const s of low.steps) for (const op of s.ops) if (op.o === 'copy') lowCopies++;
console.log(`${config.policy} ${config.hbm_budget}: per step, simulated host copies ${(simCopies / n).toFixed(1)}, executor copies ${(lowCopies / n).toFixed(1)} (host clock ${hardware.gpu.issue_copy_us ?? 'off'})`);
