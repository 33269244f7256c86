// On the GPU machine (plain node, compiled JS): the host's pace issuing block conversions in the executor's own
// loop, with and without the GPU holding it back. A SmartKV plan (its re-bucketing step converts thousands of
// blocks) is recorded and lowered as `hil run` does, then run by the executor (run-plan.ts) twice over in
// turn: as lowered, and with its compute kernels (attention, projections, rotations) taken out, so that the
// GPU only converts and copies, faster than the host issues (perf/device/convert-pairs.mjs: about 3.5 us a
// kernel), and the launch queue never holds the host back. Per run and step: the host's issue time, the
// GPU's step, the conversion launches; the steps' spans of the runs as lowered go to SPANS (JSON).
//   node perf/device/convert-pace.mjs DIST TRACE PROFILE BUDGET SPANS   (KVTIER_HIL_ADDON names the addon; ROUNDS;
//   POLICY, default smartkv; MODEL, a preset or model file, default llama-3-8b; GROUP, the quantization group size,
//   default 128: any other policy's plan runs the same two ways, and its step's host time without compute
//   against its time as lowered tells the host's own pace from its waits on the GPU)
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, trace, profile, budget, spansOut] = process.argv.slice(2);
if (!spansOut) throw new Error('usage: node perf/device/convert-pace.mjs DIST TRACE PROFILE BUDGET SPANS');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { recordAndLower } = await load('hil/executor/hil-run.js');
const { runPlan } = await load('hil/executor/run-plan.js');
const { BlockData } = await load('hil/executor/block-data.js');
const { blockBytes } = await load('hil/kv-format.js');
const { withoutCompute } = await load('hil/bench/plan-issue-bench.js');
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const b = openBackend(process.env.BACKEND ?? 'cuda');
const POLICY = process.env.POLICY ?? 'smartkv';
const { sim, lowered } = recordAndLower({ trace, policy: POLICY, model: process.env.MODEL ?? 'llama-3-8b', hardware: profile, hbm_budget: budget, group_size: Number(process.env.GROUP ?? 128) }, { backend: b.kind });
const noCompute = withoutCompute(lowered);
const conversions = lowered.steps.map((s) => s.ops.filter((op) => op.o === 'quant' || op.o === 'dequant').length);
const spans = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, plan] of [['as lowered', lowered], ['no compute', noCompute]]) {
    const data = new BlockData(1, blockBytes(lowered.geometry, 'fp16') / 2);
    const traced = name === 'as lowered';
    const run = await runPlan(b, plan, sim.resolved.model, data, { nvmeDir: '/tmp', directIo: false, ioThreads: 4, fileBatch: true, maxWeightBytes: 1 << 30, traceSteps: traced ? lowered.steps.length : 0, verify: false, hostProbe: true });
    if (traced) spans.push({ round, spans: run.spans });
    console.log(JSON.stringify({ round, variant: name, policy: POLICY, budget, host_probe: run.hostBefore ?? null, conversions, ops: plan.steps.map((s) => s.ops.length), issue_us: run.steps.map((s) => +s.host_issue_us.toFixed(1)), latency_us: run.steps.map((s) => +s.latency_us.toFixed(1)) }));
  }
}
writeFileSync(spansOut, JSON.stringify(spans));
