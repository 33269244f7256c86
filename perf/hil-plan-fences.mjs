#!/usr/bin/env node
// Offline (no GPU): lowers a run's recorded plan as the HIL executor does and counts, per step, the
// cross-stream fences: the memory stream's waits on the compute stream (and whether the copy behind
// each one goes into the staging ring, i.e. ring reuse), the compute stream's waits on memory, and the
// memory stream's H2D <-> D2H direction switches. Next to it, the simulator's own count of ring waits
// (sim/staging-ring.ts) for the same run. See lab/notes/HIL-NOTES.md, "Where the memory stream sits idle".
//   node perf/hil-plan-fences.mjs --trace T.kvt --hardware PROFILE [--policy lru-offload] [--options k=v,...]
//        [--budget 20%] [--dist dist] [--eager]
import { deviceArgs } from './device-args.mjs';

const { args, opt, load } = deviceArgs('runs/hil-plan-fences');
const { simulate } = await load('sim/run.js');
const { SimExecutor } = await load('sim/sim-executor.js');
const { defaultStagingRingBytes } = await load('sim/staging-ring.js');
const { PlanRecorder } = await load('hil/executor/plan-recorder.js');
const { allLinkKeys } = await load('hil/executor/link-keys.js');
const { lowerPlan } = await load('hil/executor/lower-plan.js');
const { directionSwitches } = await load('hil/executor/run-plan.js');

const options = Object.fromEntries((opt('options', '') || '').split(',').filter(Boolean).map((kv) => kv.split('=')));
const config = { trace: opt('trace'), policy: opt('policy', 'lru-offload'), policy_options: options, hardware: opt('hardware'), hbm_budget: opt('budget', '20%') };
if (!config.trace || !config.hardware) throw new Error('usage: --trace T.kvt --hardware PROFILE [--policy P] [--options k=v,...] [--budget 20%] [--eager]');
const eager = args.includes('--eager');

let rec;
const r = simulate(config, { executor: (res, cache) => (rec = new PlanRecorder(cache, allLinkKeys(res.hardware))) });
const { model, hardware, header } = r.resolved;
const low = lowerPlan(rec.plan, model, hardware, header.block_size, { slabBytes: 2 << 20, groupSize: 128, eagerFences: eager });

let simWaits = [];
let sim;
simulate(config, {
  executor: (res, cache) => {
    sim = new SimExecutor(res.hardware, res.model, { traceSteps: 0, staging: { ringBytes: defaultStagingRingBytes(cache.maxBlocks, cache.bytesOf(16)), fence: eager ? 'eager' : 'lazy' }, tailWaits: true });
    const end = sim.endStep.bind(sim);
    let prev = 0;
    sim.endStep = () => {
      simWaits.push(sim.ring.waits - prev);
      prev = sim.ring.waits;
      return end();
    };
    return sim;
  },
});

console.log(`${config.policy} ${JSON.stringify(options)}: ring ${low.ringBytes} B (sim ${sim.ring.bytes} B), fences recorded compute ${low.fences[0]} / memory ${low.fences[1]}${eager ? ' (eager)' : ''}`);
console.log('step  mem-waits  (into ring)  compute-waits  dir-switches  mem-copies  sim-ring-waits');
const tot = [0, 0, 0, 0, 0, 0];
for (const [i, s] of low.steps.entries()) {
  let memWaits = 0;
  let ringWaits = 0;
  let compWaits = 0;
  let copies = 0;
  for (let k = 0; k < s.ops.length; k++) {
    const op = s.ops[k];
    if (op.o === 'copy' && op.s === 1) copies++;
    if (op.o !== 'wait') continue;
    if (op.s === 0) {
      compWaits++;
      continue;
    }
    memWaits++;
    let j = k + 1;
    while (j < s.ops.length && !(s.ops[j].o === 'copy' && s.ops[j].s === 1)) j++;
    const nx = s.ops[j];
    if (nx && nx.dst === 'arena' && nx.dstOff < low.ringBytes) ringWaits++;
  }
  const row = [memWaits, ringWaits, compWaits, directionSwitches(s.ops), copies, simWaits[i] ?? 0];
  row.forEach((v, c) => (tot[c] += v));
  if (args.includes('--all') || i < 8) console.log(`${String(s.step).padStart(4)}  ${row.map((v, c) => String(v).padStart([9, 11, 14, 13, 11, 15][c])).join('')}`);
}
const n = low.steps.length;
console.log(`mean  ${tot.map((v, c) => (v / n).toFixed(1).padStart([9, 11, 14, 13, 11, 15][c])).join('')}`);
