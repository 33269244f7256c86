/**
 * Startup of the kvtier command line, against bare `node -e 0` in the same run: each round runs
 * every command once, in turn, so all of them see the same machine state; medians over the rounds.
 *
 *  - `kvtier --help` and `kvtier policies`: wall time, and the ratio to `node -e 0`;
 *  - `kvtier run`'s overhead: the wall time of `node bin/kvtier.js run --trace T --policy h2o ...`
 *    minus the replay itself (simulate() with the same settings, timed inside a fresh process, so
 *    it is as cold as the one in the command).
 *
 * Runs the compiled CLI as bin/kvtier.js does: `npm run build` first (tsc, then the bundle in
 * dist/bundle/, which bin/kvtier.js runs while it is at least as new as dist/cli/main.js; the first
 * line printed says which one ran). The trace is the one of perf/replay.bench.ts (Llama-3-8B, 32k
 * prompt, 1000 steps, top-k), generated once into --trace.
 *
 * --baseline DIR adds the same commands from another built kvtier checkout (e.g. an older commit:
 * `git archive REV | tar -x -C DIR`, link node_modules, `npm run build` there) to the same rounds,
 * for a before/after in one run.
 *
 *   node perf/startup.bench.mjs [--rounds 9] [--trace PATH] [--steps 1000] [--prompt 32768] [--no-run] [--baseline DIR]
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const rounds = Number(arg('rounds', '9'));
const steps = Number(arg('steps', '1000'));
const prompt = Number(arg('prompt', '32768'));
const withRun = !process.argv.includes('--no-run');
const trace = arg('trace', path.join(os.tmpdir(), `kvtier-bench-llama3-8b-${prompt}-${steps}-topk.kvt`));
const cli = path.join(root, 'bin/kvtier.js');
const baseline = arg('baseline', '');
const baseCli = baseline && path.resolve(baseline, 'bin/kvtier.js');
if (baseCli && !fs.existsSync(baseCli)) throw new Error(`--baseline ${baseline}: no bin/kvtier.js there`);
const dist = (p) => new URL(`../dist/${p}`, import.meta.url).href;

if (!fs.existsSync(path.join(root, 'dist/cli/main.js'))) throw new Error('no dist/: run "npm run build" first');
if (withRun && !fs.existsSync(trace)) {
  const { generateTrace } = await import(dist('traces/generator.js'));
  const t0 = performance.now();
  generateTrace(trace, { model: 'llama-3-8b', layers: 32, prompt_tokens: prompt, steps, encoding: 'topk', seed: 1 });
  console.log(`generated ${trace} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
/** What bin/kvtier.js of the checkout at `dir` runs: its bundle where it knows one and that is at least as new as dist/cli/main.js. */
function entryOf(dir) {
  if (!fs.readFileSync(path.join(dir, 'bin/kvtier.js'), 'utf8').includes('dist/bundle/main.js')) return 'dist/cli/main.js';
  const bundle = fs.statSync(path.join(dir, 'dist/bundle/main.js'), { throwIfNoEntry: false });
  return bundle && bundle.mtimeMs >= fs.statSync(path.join(dir, 'dist/cli/main.js')).mtimeMs ? 'dist/bundle/main.js' : 'dist/cli/main.js';
}
const entries = () => `kvtier runs ${entryOf(root)}${baseline ? `, baseline ${entryOf(baseline)}` : ''}`;
const entriesAtStart = entries();
console.log(entriesAtStart);
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'kvtier-startup-'));

/** Wall seconds of one command; throws with its output when it fails. */
function wall(args) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  const s = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}:\n${r.stdout}${r.stderr}`);
  return { s, stdout: r.stdout };
}

const runArgs = ['--trace', trace, '--policy', 'h2o', '--hardware', 'h100-pcie5', '--hbm-budget', '20%'];
// simulate() with the flags above, in a fresh process, after its modules are loaded
const replayScript = `
const { simulate } = await import(${JSON.stringify(dist('sim/run.js'))});
const t0 = performance.now();
simulate({ trace: ${JSON.stringify(trace)}, policy: 'h2o', hardware: 'h100-pcie5', hbm_budget: '20%', group_size: 128, trace_steps: 32, copy_mode: 'per-run' });
console.log((performance.now() - t0) / 1000);`;

const cases = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'kvtier --help', args: [cli, '--help'] },
  { name: 'kvtier policies', args: [cli, 'policies'] },
  { name: 'kvtier hardware', args: [cli, 'hardware'] },
];
if (withRun) {
  cases.push({ name: 'kvtier run (wall)', args: [cli, 'run', ...runArgs, '--out', path.join(out, 'run'), '--force'] });
  cases.push({ name: 'replay in-process', args: ['--input-type=module', '-e', replayScript], inner: true });
}
if (baseCli) {
  cases.push({ name: 'baseline --help', args: [baseCli, '--help'] });
  cases.push({ name: 'baseline policies', args: [baseCli, 'policies'] });
  cases.push({ name: 'baseline hardware', args: [baseCli, 'hardware'] });
  if (withRun) cases.push({ name: 'baseline run (wall)', args: [baseCli, 'run', ...runArgs, '--out', path.join(out, 'base-run'), '--force'] });
}

const times = new Map(cases.map((c) => [c.name, []]));
for (let round = -1; round < rounds; round++) {
  for (const c of cases) {
    const r = wall(c.args);
    if (round >= 0) times.get(c.name).push(c.inner ? Number(r.stdout.trim()) : r.s);
  }
}
fs.rmSync(out, { recursive: true, force: true });

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const base = median(times.get('node -e 0'));
console.log(`node ${process.version}, ${os.cpus().length} cores, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${rounds} rounds (+1 warm-up), medians`);
for (const c of cases) {
  const m = median(times.get(c.name));
  const ratio = c.inner ? '' : `  ${(m / base).toFixed(2)}x node -e 0, +${((m - base) * 1000).toFixed(0)} ms`;
  console.log(`${c.name.padEnd(22)} ${m.toFixed(3)} s${ratio}`);
}
if (withRun) {
  const run = times.get('kvtier run (wall)');
  const replay = times.get('replay in-process');
  const overhead = run.map((x, i) => x - replay[i]);
  console.log(`kvtier run overhead   ${median(overhead).toFixed(3)} s (wall of the command minus its replay, per round; target <= 0.3 s)`);
  if (baseCli) {
    const base = times.get('baseline run (wall)').map((x, i) => x - replay[i]);
    console.log(`baseline run overhead ${median(base).toFixed(3)} s (${baseline})`);
  }
}
console.log('targets: --help and policies <= 0.3 s wall');
if (entries() !== entriesAtStart) console.log(`the build changed during the rounds (tsc or the bundle ran): now ${entries()}`);
