/**
 * Replay speed of every registered policy against H2O, measured side by side in one process: on one
 * generated trace (Llama-3-8B, 32k context, 1000 decode steps, as perf/replay.bench.ts makes it), each
 * policy's replay alternates with an H2O replay, so both see the same machine state; the table gives
 * each policy's median CPU time (user + system of this process during the replay: on a machine
 * shared with other work it varies far less than wall time; the replay runs on one thread, so on an
 * idle machine the two agree) and wall time, its ratio to the median CPU time of the H2O runs
 * interleaved with it, the peak
 * memory of a separate process that replays only that policy (its maximum resident set), and a
 * digest of the run's summary and per-step table (equal digests = identical results). The same
 * separate processes time their one replay (CPU, as above, from the trace's opening to the results,
 * after the modules are loaded: a `kvtier run` replays once, so it pays the compiling that the
 * in-process rounds leave behind), the median over `--fresh` processes per policy, each after one of
 * the base policy's, and its ratio to the median of those.
 * Targets: every policy <= 5x H2O, the oracle <= 10x, on both readings where both are measured.
 *
 *   npx tsx perf/policy-speed.bench.ts [--trace PATH] [--prompt 32768] [--steps 1000] [--budget 20%]
 *       [--rounds 3] [--fresh 1] [--policies a,b,c] [--no-memory] [--json PATH]
 *
 * --no-memory leaves out the separate processes (memory and the fresh-process reading).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { registerBuiltinPolicies } from '../policies/builtin.js';
import { listPolicies } from '../policies/registry.js';
import { simulate, type RunResult } from '../sim/run.js';
import { generateTrace } from '../traces/generator.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const flag = (name: string) => process.argv.includes(`--${name}`);
const steps = Number(arg('steps', '1000'));
const prompt = Number(arg('prompt', '32768'));
const budget = arg('budget', '20%');
const rounds = Number(arg('rounds', '3'));
const trace = arg('trace', path.join(os.tmpdir(), `kvtier-bench-llama3-8b-${prompt}-${steps}-topk.kvt`));
const BASE = 'h2o';
/** ratio targets: the oracle reads the future and may take longer */
const target = (policy: string) => (policy === 'oracle' ? 10 : 5);

const replay = (policy: string): RunResult => simulate({ trace, policy, hardware: 'h100-pcie5', hbm_budget: budget, trace_steps: 0 });

/** sha-256 (first 12 hex digits) of the run's summary and per-step table */
function digest(r: RunResult): string {
  const h = createHash('sha256');
  h.update(JSON.stringify(r.summary));
  h.update(JSON.stringify(r.steps));
  return h.digest('hex').slice(0, 12);
}

/** one replay: CPU seconds (user + system), wall seconds, and the results' digest */
function timed(policy: string): { s: number; wall: number; digest: string } {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const r = replay(policy);
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { s: (c.user + c.system) / 1e6, wall, digest: digest(r) };
}

const median = (xs: number[]) => {
  const a = [...xs].sort((x, y) => x - y);
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
};

// child mode: replay one policy once and report this process's peak resident set
if (flag('child')) {
  const policy = arg('child', BASE);
  registerBuiltinPolicies();
  const before = process.memoryUsage().rss;
  const c0 = process.cpuUsage();
  replay(policy);
  const c = process.cpuUsage(c0);
  console.log(JSON.stringify({ maxRssMB: process.resourceUsage().maxRSS / 1024, beforeMB: before / 2 ** 20, cpuS: (c.user + c.system) / 1e6 }));
  process.exit(0);
}

/** A fresh process that replays `policy` once: its peak resident set (MB), its resident set before the replay, and the replay's CPU seconds. */
function freshRun(policy: string): { maxRssMB: number; beforeMB: number; cpuS: number } | null {
  const self = fileURLToPath(import.meta.url);
  const r = spawnSync(process.execPath, [...process.execArgv, self, '--child', policy, '--trace', trace, '--budget', budget], { encoding: 'utf8' });
  if (r.status !== 0) {
    console.error(`fresh process of ${policy}: child exited ${r.status}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    return null;
  }
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

registerBuiltinPolicies();
if (!fs.existsSync(trace)) {
  const t0 = performance.now();
  generateTrace(trace, { model: 'llama-3-8b', layers: 32, prompt_tokens: prompt, steps, encoding: 'topk', seed: 1 });
  console.log(`generated ${trace} (${(fs.statSync(trace).size / 1e6).toFixed(1)} MB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
const wanted = arg('policies', '');
const all = listPolicies().map((d) => d.name);
const policies = wanted ? wanted.split(',') : all.filter((p) => p !== BASE);
for (const p of policies) if (!all.includes(p)) throw new Error(`--policies: unknown policy "${p}" (policies: ${all.join(', ')})`);

console.log(`trace ${path.basename(trace)}, budget ${budget}, ${rounds} rounds per policy, each interleaved with ${BASE}`);
// warm-up: one replay of the base
timed(BASE);
const baseRuns: number[] = [];
const rows: { policy: string; s: number; wall: number; base: number; ratio: number; freshS?: number; freshBaseS?: number; freshRatio?: number; freshFailed: boolean; digest: string; maxRssMB?: number; overMB?: number; ok: boolean }[] = [];
const memoryOn = !flag('no-memory');
if (!memoryOn && process.argv.includes('--fresh')) throw new Error('--fresh times the separate processes, which --no-memory leaves out: give one of them');
const freshN = memoryOn ? Number(arg('fresh', '1')) : 0;
if (memoryOn && !(Number.isInteger(freshN) && freshN >= 1)) throw new Error(`--fresh must be an integer >= 1 (got ${arg('fresh', '') ?? ''})`);
/**
 * The policy's fresh processes, each after one of the base policy's (so that both see the same machine
 * state): the first one's memory, the median replay CPU of each; 'failed' where a process failed (its
 * error printed), null with --no-memory.
 */
function fresh(policy: string): { maxRssMB: number; beforeMB: number; cpuS: number; baseCpuS: number } | 'failed' | null {
  if (!memoryOn) return null;
  const mine: number[] = [];
  const theirs: number[] = [];
  let first: { maxRssMB: number; beforeMB: number } | undefined;
  for (let i = 0; i < freshN; i++) {
    const b = freshRun(BASE);
    const r = freshRun(policy);
    if (!b || !r) return 'failed';
    theirs.push(b.cpuS);
    mine.push(r.cpuS);
    first ??= r;
  }
  return { maxRssMB: first!.maxRssMB, beforeMB: first!.beforeMB, cpuS: median(mine), baseCpuS: median(theirs) };
}
const baseMem = memoryOn ? freshRun(BASE) : null;
if (memoryOn && !baseMem) throw new Error(`the base policy's fresh process failed (above): no memory or fresh-process reading to compare with`);
let baseDigest = '';
for (const p of policies) {
  const mine: number[] = [];
  const walls: number[] = [];
  const theirs: number[] = [];
  let d = '';
  for (let r = 0; r < rounds; r++) {
    const b = timed(BASE);
    theirs.push(b.s);
    baseDigest = b.digest;
    const t = timed(p);
    mine.push(t.s);
    walls.push(t.wall);
    d = t.digest;
  }
  baseRuns.push(...theirs);
  const s = median(mine);
  const base = median(theirs);
  const f = fresh(p);
  const mem = f === 'failed' ? null : f;
  const freshRatio = mem ? mem.cpuS / mem.baseCpuS : undefined;
  // (both readings judged; a fresh process that failed is no reading, and the row misses)
  const ok = s / base <= target(p) && (freshRatio === undefined || freshRatio <= target(p)) && f !== 'failed';
  const row = { policy: p, s, wall: median(walls), base, ratio: s / base, freshS: mem?.cpuS, freshBaseS: mem?.baseCpuS, freshRatio, freshFailed: f === 'failed', digest: d, maxRssMB: mem?.maxRssMB, overMB: mem && baseMem ? mem.maxRssMB - baseMem.maxRssMB : undefined, ok };
  rows.push(row);
  const memText = f === 'failed' ? '  fresh process FAILED (above)' : mem ? `  fresh process ${mem.cpuS.toFixed(3)} s ${freshRatio!.toFixed(1)}x (${BASE} ${mem.baseCpuS.toFixed(3)} s)  peak ${mem.maxRssMB.toFixed(0).padStart(5)} MB (${row.overMB! >= 0 ? '+' : ''}${row.overMB!.toFixed(0)} vs ${BASE})` : '';
  console.log(
    `${p.padEnd(14)} cpu ${s.toFixed(3).padStart(8)} s (wall ${row.wall.toFixed(3)} s)  ${BASE} ${base.toFixed(3)} s  ${row.ratio.toFixed(1).padStart(6)}x${memText}  ${row.ok ? 'meets' : 'MISSES'} <=${target(p)}x  digest ${d}`,
  );
}
console.log(`${BASE}: median cpu ${median(baseRuns).toFixed(3)} s over ${baseRuns.length} runs${baseMem ? `, peak ${baseMem.maxRssMB.toFixed(0)} MB` : ''}, digest ${baseDigest}${memoryOn ? ` (fresh processes: ${freshN} per policy, each after one of ${BASE}'s)` : ''}`);
const json = arg('json', '');
if (json) fs.writeFileSync(json, JSON.stringify({ trace: path.basename(trace), budget, rounds, fresh: freshN, base: { policy: BASE, median_s: median(baseRuns), maxRssMB: baseMem?.maxRssMB, digest: baseDigest }, rows }, null, 2) + '\n');
