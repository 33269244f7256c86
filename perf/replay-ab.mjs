/**
 * Replay speed of two builds of kvtier side by side in one process (a before/after of a change to the
 * simulator): both builds' dist/ are loaded, and their replays of one trace alternate (A B, B A, ...)
 * so that both see the same machine state. Prints, per build, the median and least CPU time (user +
 * system of this process during the replay) and the digests of the runs (summary and per-step table:
 * equal digests = identical results).
 *
 * --executor-only times the simulated executor alone: one replay with build A records every call the
 * replay driver makes of its executor (moves, stages, layers, steps), then each round hands the same
 * calls to build A's and build B's SimExecutor; the digest is then of the step timings. This leaves
 * out the policy, the driver and the trace reading, whose time varies more than the executor's on a
 * shared machine.
 *
 * A build: a checkout with `npx tsc -p tsconfig.json` run (e.g. `git worktree add /tmp/base REV`, link
 * node_modules, build there). Its dist/ folder is what is given.
 *
 *   node perf/replay-ab.mjs DIST_A DIST_B [--policy synapsevm] [--options '{"mode":"lossless"}']
 *       [--rounds 8] [--trace PATH] [--budget 20%] [--hardware h100-pcie5] [--executor-only]
 *
 * The trace defaults to the one of perf/policy-speed.bench.ts (run it once to make it).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const VALUED = ['--policy', '--options', '--rounds', '--trace', '--budget', '--hardware'];
const unknown = args.filter((a) => a.startsWith('--') && a !== '--executor-only' && !VALUED.includes(a));
if (unknown.length > 0) {
  console.error(`replay-ab: unknown option ${unknown[0]} (options: ${[...VALUED, '--executor-only'].join(', ')})`);
  process.exit(2);
}
const positional = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && VALUED.includes(args[i - 1])));
const usage = 'usage: node perf/replay-ab.mjs DIST_A DIST_B [--policy NAME] [--options JSON] [--rounds N] [--trace PATH] [--budget PCT] [--hardware NAME] [--executor-only]';
if (positional.length !== 2) {
  console.error(`replay-ab: expected two dist folders, got ${positional.length}\n${usage}`);
  process.exit(2);
}
const dists = positional.map((d) => path.resolve(d));
for (const d of dists) {
  if (!fs.existsSync(path.join(d, 'sim', 'run.js'))) {
    console.error(`replay-ab: ${d} is not a built dist/ folder (no sim/run.js): run npx tsc -p tsconfig.json in its checkout`);
    process.exit(2);
  }
}
const policy = arg('policy', 'synapsevm');
let options;
try {
  options = JSON.parse(arg('options', '{}'));
} catch (e) {
  console.error(`replay-ab: --options must be a JSON object (got ${arg('options', '')}: ${e.message})`);
  process.exit(2);
}
const rounds = Number(arg('rounds', '8'));
if (!(Number.isInteger(rounds) && rounds >= 1)) {
  console.error(`replay-ab: --rounds must be an integer >= 1 (got ${arg('rounds', '')})`);
  process.exit(2);
}
const trace = arg('trace', path.join(os.tmpdir(), 'kvtier-bench-llama3-8b-32768-1000-topk.kvt'));
if (!fs.existsSync(trace)) {
  console.error(`replay-ab: trace ${trace} not found (run perf/policy-speed.bench.ts once to make it, or pass --trace)`);
  process.exit(2);
}
const executorOnly = args.includes('--executor-only');
const config = { trace, policy, policy_options: options, hardware: arg('hardware', 'h100-pcie5'), hbm_budget: arg('budget', '20%'), trace_steps: 0 };

const load = async (dist) => {
  const url = (p) => pathToFileURL(path.join(dist, p)).href;
  (await import(url('policies/builtin.js'))).registerBuiltinPolicies();
  return {
    simulate: (await import(url('sim/run.js'))).simulate,
    SimExecutor: (await import(url('sim/sim-executor.js'))).SimExecutor,
    ringBytes: (await import(url('sim/staging-ring.js'))).defaultStagingRingBytes,
  };
};
const builds = [await load(dists[0]), await load(dists[1])];
const digest = (x) => createHash('sha256').update(JSON.stringify(x)).digest('hex').slice(0, 12);

/** the executor calls of one replay with build A, and the executor's settings as run.ts makes them */
function record() {
  const calls = [];
  let make;
  builds[0].simulate(config, {
    executor: (resolved, cache, p) => {
      const opts = { traceSteps: 0, weightStreaming: p.weights, rotation: p.rotation, copyMode: config.copy_mode, staging: { ringBytes: builds[0].ringBytes(cache.maxBlocks, cache.bytesOf(16)), fence: 'eager' }, tailWaits: true };
      make = (Ex) => new Ex(resolved.hardware, resolved.model, opts);
      let n = 0;
      return {
        kind: 'sim',
        spans: [],
        beginStep: (step, context) => calls.push(['begin', step, context]),
        move: (b) => (calls.push(['move', { ...b, blocks: [...b.blocks] }]), n++),
        stage: (b) => (calls.push(['stage', { ...b, blocks: [...b.blocks] }]), n++),
        layer: (w, waits) => calls.push(['layer', { ...w, fetchBytes: [...w.fetchBytes], fetchRuns: [...w.fetchRuns], attendedMask: new Uint8Array(0) }, [...waits]]),
        endStep: () => (calls.push(['end']), { latency_us: 0, compute_us: 0, stall_us: 0, transfer_us: 0, bytes: {} }),
        finish: () => ({}),
      };
    },
  });
  // the handles a layer waits on: kept from their move or stage until that layer, then let go
  // (typed flags, not a Set: the lookups stay out of the executor's timed replay)
  let handles = 0;
  for (const c of calls) if (c[0] === 'move' || c[0] === 'stage') handles++;
  const used = new Uint8Array(handles);
  for (const c of calls) if (c[0] === 'layer') for (const h of c[2]) used[h] = 1;
  return { calls, make, used };
}

function replayExecutor(rec, Ex) {
  const ex = rec.make(Ex);
  const handles = new Array(rec.used.length).fill(undefined);
  const timings = [];
  let n = 0;
  for (const c of rec.calls) {
    if (c[0] === 'begin') ex.beginStep(c[1], c[2]);
    else if (c[0] === 'move' || c[0] === 'stage') {
      const h = c[0] === 'move' ? ex.move(c[1]) : ex.stage(c[1]);
      if (rec.used[n] === 1) handles[n] = h;
      n++;
    } else if (c[0] === 'layer') {
      ex.layer(c[1], c[2].map((i) => {
        const h = handles[i];
        handles[i] = undefined;
        return h;
      }));
    } else timings.push(ex.endStep());
  }
  return digest(timings);
}

const rec = executorOnly ? record() : null;
const cpu = [[], []];
const seen = [new Set(), new Set()];
for (let r = 0; r < rounds; r++) {
  for (const j of r % 2 ? [1, 0] : [0, 1]) {
    const c0 = process.cpuUsage();
    let d;
    if (rec) d = replayExecutor(rec, builds[j].SimExecutor);
    else {
      const res = builds[j].simulate(config);
      d = digest({ s: res.summary, t: res.steps });
    }
    const c = process.cpuUsage(c0);
    cpu[j].push((c.user + c.system) / 1e6);
    seen[j].add(d);
  }
}
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
console.log(`${executorOnly ? 'executor alone' : 'replay'}: ${policy} ${JSON.stringify(options)}, ${path.basename(trace)}, ${config.hbm_budget}, ${config.hardware}, ${rounds} rounds`);
for (const j of [0, 1]) {
  console.log(`${j ? 'B' : 'A'} ${dists[j]}: median ${median(cpu[j]).toFixed(3)} s, min ${Math.min(...cpu[j]).toFixed(3)} s CPU, digest ${[...seen[j]].join(',')}  [${cpu[j].map((x) => x.toFixed(3)).join(' ')}]`);
}
const same = seen[0].size === 1 && seen[1].size === 1 && [...seen[0]][0] === [...seen[1]][0];
console.log(same ? 'same results' : 'RESULTS DIFFER');
process.exitCode = same ? 0 : 1;
