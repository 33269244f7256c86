#!/usr/bin/env node
// Offline (no GPU): lowers a policy's plan as the HIL executor does and counts, per step, the ops the
// host issues by kind (memory-stream copies, compute-stream copies, (de)quantize kernels, events
// recorded, waits, attention, GEMVs, marks), to set against a step's measured time when asking whether
// the host's issue path can keep up.
//   node lab/experiments/op-count.mjs --trace T.kvt --hardware PROFILE [--policy kivi] [--budget 10%] [--model M] [--dist dist]
import { deviceArgs } from '../../perf/device-args.mjs';

const { opt, load } = deviceArgs('runs/op-count');
const { simulate } = await load('sim/run.js');
const { PlanRecorder } = await load('hil/executor/plan-recorder.js');
const { allLinkKeys } = await load('hil/executor/link-keys.js');
const { lowerPlan } = await load('hil/executor/lower-plan.js');

const config = { trace: opt('trace'), policy: opt('policy', 'kivi'), hardware: opt('hardware'), hbm_budget: opt('budget', '10%'), ...(opt('model', '') ? { model: opt('model', '') } : {}) };
let rec;
const r = simulate(config, { executor: (res, cache) => (rec = new PlanRecorder(cache, allLinkKeys(res.hardware))) });
const { model, hardware, header } = r.resolved;
const low = lowerPlan(rec.plan, model, hardware, header.block_size, { slabBytes: 2 << 20, groupSize: Math.min(128, model.head_dim) });
const kinds = new Map();
for (const s of low.steps) {
  for (const op of s.ops) {
    const k = op.o === 'copy' || op.o === 'record' || op.o === 'wait' || op.o === 'mark' ? `${op.o}@${op.s}` : op.o;
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
}
const n = low.steps.length;
const sim = r.steps.map((s) => s.latency_us / 1e3);
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
const total = [...kinds.values()].reduce((a, b) => a + b, 0);
console.log(`${config.policy} ${config.budget ?? config.hbm_budget}: ${(total / n).toFixed(0)} ops per step, sim step mean ${mean(sim.slice(1)).toFixed(2)} ms (steps 1..)`);
console.log([...kinds.entries()].sort().map(([k, v]) => `${k} ${(v / n).toFixed(0)}`).join('  '));
