// On the GPU machine (plain node, compiled JS): the host's pace at issuing a host-bound plan, against the
// CPU its issuing thread runs on. The captured model's `full` plan (every block in HBM at FP16, 51 ops a
// step) is recorded and lowered once, then run by the executor ROUNDS times; before each run the host
// issue probe (us per copy, timing/host-issue-probe.ts) and, before and after it, the CPU the thread is
// on (/proc/thread-self/stat, field 39) and that CPU's clock (/proc/cpuinfo). One JSON line per run: the
// CPUs, clocks, the run's start and end (epoch ms), probe, and the median host issue time and latency per step (the first step left out). With GPU_CLOCKS=1,
// also the GPU's SM and memory clocks and performance state (nvidia-smi) right before and after each run.
//   node perf/device/host-mode.mjs DIST TRACE MODEL   (KVTIER_HIL_ADDON names the addon; ROUNDS, default 4; TAG; BACKEND, default cuda; GPU_CLOCKS)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, trace, model] = process.argv.slice(2);
if (!model) throw new Error('usage: node perf/device/host-mode.mjs DIST TRACE MODEL');
const load = (p) => import(pathToFileURL(resolve(dist, p)).href);
const { openBackend } = await load('hil/backend.js');
const { recordAndLower } = await load('hil/executor/hil-run.js');
const { runPlan } = await load('hil/executor/run-plan.js');
const { BlockData } = await load('hil/executor/block-data.js');
const { blockBytes } = await load('hil/kv-format.js');
const ROUNDS = Number(process.env.ROUNDS ?? 4);
const cpu = () => Number(readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ')[36]);
const mhz = (c) => {
  const block = readFileSync('/proc/cpuinfo', 'utf8').split('\n\n').find((x) => new RegExp(`^processor\\s*:\\s*${c}$`, 'm').test(x));
  const m = block && /cpu MHz\s*:\s*([\d.]+)/.exec(block);
  return m ? Number(m[1]) : null;
};
const gpuClocks = () => {
  if (process.env.GPU_CLOCKS !== '1') return null;
  try {
    return execFileSync('nvidia-smi', ['--query-gpu=clocks.sm,clocks.mem,pstate,power.draw', '--format=csv,noheader,nounits'], { encoding: 'utf8' }).trim();
  } catch (e) {
    return `error: ${e.message}`;
  }
};
const med = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const b = openBackend(process.env.BACKEND ?? 'cuda');
const { sim, lowered } = recordAndLower({ trace, policy: 'full', model, hardware: 'h100-pcie5', hbm_budget: '100%', group_size: 64 }, { backend: b.kind });
for (let round = 0; round < ROUNDS; round++) {
  const g0 = gpuClocks();
  const t0 = Date.now();
  const c0 = cpu();
  const f0 = mhz(c0);
  const data = new BlockData(1, blockBytes(lowered.geometry, 'fp16') / 2);
  const run = await runPlan(b, lowered, sim.resolved.model, data, { nvmeDir: '/tmp', directIo: false, ioThreads: 4, fileBatch: true, maxWeightBytes: 1 << 30, traceSteps: 0, verify: false, hostProbe: true });
  const c1 = cpu();
  const t1 = Date.now();
  const g1 = gpuClocks();
  const rest = run.steps.slice(1);
  console.log(JSON.stringify({ tag: process.env.TAG ?? '', round, start_ms: t0, end_ms: t1, cpu_before: c0, mhz_before: f0, cpu_after: c1, mhz_after: mhz(c1), probe_us: run.hostBefore?.copy_us ?? null, ops: lowered.steps[1].ops.length, steps: rest.length, issue_us: +med(rest.map((s) => s.host_issue_us)).toFixed(1), latency_us: +med(rest.map((s) => s.latency_us)).toFixed(1), ...(g0 !== null ? { gpu_before: g0, gpu_after: g1 } : {}) }));
}
b.close();
