#!/usr/bin/env node
// Offline (no GPU): for the cells of stored validate runs, the ops the HIL executor issued per step by
// kind (each cell's plan recorded and lowered again, as hil-run's recordAndLower does, on its trace
// regenerated from the grid as `kvtier hil validate-resim` does), beside the step's stored hardware
// times (hw_ms, hw_host_issue_ms, hw_host_gap_ms) and the simulator's step and host issue time per
// step (the simulator's host clock read at each step's start and end). One JSON line per cell and
// step, for host-issue-fit.py.
//   npx tsc -p tsconfig.json
//   node lab/experiments/host-issue-ops.mjs --out /tmp/host-ops.jsonl [--policies smartkv,kivi,...] [--generated-only 1] RUNDIR...
import * as fs from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const argv = process.argv.slice(2);
const opt = (n, d) => {
  const i = argv.indexOf(`--${n}`);
  return i >= 0 ? argv.splice(i, 2)[1] : d;
};
const outFile = opt('out', '/tmp/host-ops.jsonl');
const policies = opt('policies', '');
const generatedOnly = opt('generated-only', '1') === '1';
const dist = resolve(opt('dist', 'dist'));
const load = (p) => import(pathToFileURL(join(dist, p)).href);
const { expandGrid } = await load('hil/validate/grid.js');
const { cellRunConfig, traceFile } = await load('hil/validate/validate.js');
const { readTraceHeader } = await load('traces/trace-reader.js');
const { recordAndLower } = await load('hil/executor/hil-run.js');
const { simulate } = await load('sim/run.js');
const { SimExecutor } = await load('sim/sim-executor.js');

// the simulator's host clock per step: read after beginStep (after its lead bound) and at endStep
let hostMarks = [];
const begin = SimExecutor.prototype.beginStep;
SimExecutor.prototype.beginStep = function (step) {
  begin.call(this, step);
  hostMarks.push({ h0: this.hostAt, ops0: this.hostOps, t0: this.engine.now });
};
const end = SimExecutor.prototype.endStep;
SimExecutor.prototype.endStep = function () {
  const m = hostMarks[hostMarks.length - 1];
  m.h1 = this.hostAt;
  m.ops1 = this.hostOps;
  return end.call(this);
};

function kindOf(op) {
  switch (op.o) {
    case 'copy':
      // s: 0 compute, 1 memory (fences.ts); direction by region
      return `copy_${op.src === 'arena' || op.src === 'scratch' || op.src === 'wslots' ? 'd2' : 'h2'}${op.dst === 'arena' || op.dst === 'scratch' || op.dst === 'wslots' ? 'd' : 'h'}`;
    case 'mark':
      return 'mark';
    case 'record':
    case 'wait':
      return op.o;
    case 'gemv':
      return 'gemv';
    case 'rotate':
      return 'rotate';
    case 'quant':
    case 'dequant':
      return op.o;
    case 'attn':
      return 'attn';
    default:
      return op.o;
  }
}

const tmp = fs.mkdtempSync('/tmp/host-issue-ops-');
const out = fs.createWriteStream(outFile);
const want = policies ? new Set(policies.split(',')) : null;
for (const dir of argv) {
  const v = JSON.parse(fs.readFileSync(join(dir, 'validate.json'), 'utf8'));
  const g = v.grid;
  const prof = new Map(v.profiles.map((p) => [p.model, join(dir, 'profiles', basename(p.file))]));
  const cells = new Map(expandGrid(g, (t) => readTraceHeader(t.path).prompt_tokens).map((c) => [c.id, c]));
  const traces = join(tmp, basename(dir));
  fs.mkdirSync(join(traces, 'traces'), { recursive: true });
  for (const before of v.cells) {
    if (before.status !== 'ok' || !before.hw_host_issue_ms) continue;
    if (want && !want.has(before.policy)) continue;
    if (generatedOnly && before.trace_kind !== 'generated') continue;
    const c = cells.get(before.id);
    if (!c) continue;
    const profile = prof.get(before.model);
    const config = cellRunConfig(c, traceFile(c, g, traces), profile);
    let lowered;
    try {
      ({ lowered } = recordAndLower(config, { backend: 'cuda' }));
    } catch (e) {
      console.error(`${before.id}: ${e.message.split('\n')[0]}`);
      continue;
    }
    hostMarks = [];
    const sim = simulate(config);
    const run = basename(dir);
    const q = JSON.parse(fs.readFileSync(profile, 'utf8')).gpu.launch_queue_ops ?? 0;
    lowered.steps.forEach((s, i) => {
      // counts: every op of the step; after_q: the ops issued after the step's q-th memory-stream op
      // (copies, conversion launches, marks/records/waits on the memory stream), q = gpu.launch_queue_ops
      const counts = {};
      const after_q = {};
      let mem = 0;
      for (const op of s.ops) {
        const k = kindOf(op);
        counts[k] = (counts[k] ?? 0) + 1;
        if (q > 0 && mem >= q) after_q[k] = (after_q[k] ?? 0) + 1;
        if (op.o === 'quant' || op.o === 'dequant' || ((op.o === 'copy' || op.o === 'mark' || op.o === 'record') && op.s === 1) || (op.o === 'wait' && op.s === 1)) mem++;
      }
      const m = hostMarks[i] ?? {};
      out.write(JSON.stringify({
        run, id: before.id, policy: before.policy, label: before.label, budget: before.budget, model: before.model, context: before.context, step: i, counts, after_q, queue_ops: q, mem_ops: mem,
        hw_ms: before.hw_ms.map((r) => r[i]), hw_issue_ms: before.hw_host_issue_ms.map((r) => r[i]), hw_gap_ms: before.hw_host_gap_ms?.map((r) => r[i]),
        sim_ms: sim.steps[i]?.latency_ms, sim_issue_ms: (m.h1 - m.h0) / 1e3, sim_host_ops: m.ops1 - m.ops0, sim_host_lead_ms: (m.t0 - m.h0) / 1e3,
      }) + '\n');
    });
    console.error(`${run} ${before.id}: ${lowered.steps.length} steps`);
  }
}
out.end();
fs.rmSync(tmp, { recursive: true, force: true });
