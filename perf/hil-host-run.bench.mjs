/**
 * `kvtier hil run --backend host` on one trace for each policy, one after the other in this run:
 * wall time, CPU time (user + sys), peak RSS (GNU time), the per-step latency the run measured
 * (median, max), and the machine's load average before and after, so that a number taken on a busy
 * machine says so. Then the host GEMV alone at the model's layer shape (the part of a step that is
 * inherent on a CPU: every step reads every layer's weight bytes once): GB/s of wall time, and GB
 * per CPU-second of this process (which a busy machine does not change much), and what each makes
 * of a step: weight bytes per step / that rate.
 *
 * Runs the compiled CLI and addon: `npx tsc -p tsconfig.json` and `node hil/build.mjs` first.
 *
 *   node perf/hil-host-run.bench.mjs [--trace traces/bundled/llama-3-8b-2k-needle.kvt]
 *       [--policies h2o,lru-offload | none] [--model NAME|FILE] [--group-size N] [--json OUT]
 * --policies none: the GEMV part alone (--model, default llama-3-8b).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const trace = path.resolve(arg('trace', path.join(root, 'traces/bundled/llama-3-8b-2k-needle.kvt')));
const policies = arg('policies', 'h2o,lru-offload') === 'none' ? [] : arg('policies', 'h2o,lru-offload').split(',');
const model = arg('model', undefined);
const groupSize = arg('group-size', undefined);
const jsonOut = arg('json', undefined);
const time = '/usr/bin/time';
if (!fs.existsSync(time)) {
  console.error('perf/hil-host-run.bench.mjs: needs GNU time at /usr/bin/time (apt-get install time)');
  process.exit(2);
}
if (!fs.existsSync(path.join(root, 'dist/cli/main.js'))) {
  console.error('perf/hil-host-run.bench.mjs: the compiled CLI is missing: npx tsc -p tsconfig.json');
  process.exit(2);
}

const load = () => os.loadavg().map((x) => Math.round(x * 100) / 100);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kvtier-hil-host-bench-'));
const results = [];
try {
  for (const policy of policies) {
    const out = path.join(tmp, policy);
    const loadBefore = load();
    const cli = ['bin/kvtier.js', 'hil', 'run', '--backend', 'host', '--trace', trace, '--policy', policy, '--out', out, '--force'];
    if (model) cli.push('--model', model);
    if (groupSize) cli.push('--group-size', groupSize);
    const r = spawnSync(time, ['-f', 'KVTIER_TIME %e %U %S %M', process.execPath, ...cli], { cwd: root, encoding: 'utf8' });
    const line = (r.stderr ?? '').split('\n').find((l) => l.startsWith('KVTIER_TIME '));
    if (r.status !== 0 || !line) {
      console.error(`${policy}: hil run failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
      process.exit(1);
    }
    const [wall, user, sys, rssKb] = line.split(' ').slice(1).map(Number);
    const rows = fs.readFileSync(path.join(out, 'hil-steps.csv'), 'utf8').trim().split('\n').slice(1).map((l) => Number(l.split(',')[1]) / 1e3);
    const sorted = [...rows].sort((a, b) => a - b);
    const hil = JSON.parse(fs.readFileSync(path.join(out, 'hil.json'), 'utf8'));
    results.push({
      policy,
      steps: rows.length,
      wall_s: wall,
      cpu_s: Math.round((user + sys) * 100) / 100,
      peak_rss_mb: Math.round(rssKb / 1024),
      setup_s: Math.round(hil.setup_ms) / 1000,
      step_ms_p50: Math.round(sorted[Math.floor(sorted.length / 2)]),
      step_ms_max: Math.round(sorted.at(-1)),
      cpu_per_step_s: Math.round(((user + sys) / rows.length) * 1000) / 1000,
      load_before: loadBefore,
      load_after: load(),
    });
    console.log(JSON.stringify(results.at(-1)));
  }

  // the GEMV alone at the layer shape: the weight bytes every step reads
  const { openBackend } = await import(pathToFileURL(path.join(root, 'dist/hil/backend.js')).href);
  const { loadModel } = await import(pathToFileURL(path.join(root, 'dist/sim/models/load-model.js')).href);
  // the model the runs resolved (config.json holds the whole spec)
  const m = model || policies.length === 0 ? loadModel(model ?? 'llama-3-8b') : JSON.parse(fs.readFileSync(path.join(tmp, policies[0], 'config.json'), 'utf8')).model;
  const rowsW = Math.max(8, Math.round(m.weight_bytes_per_layer / 2 / m.hidden));
  const bytes = rowsW * m.hidden * 2;
  const b = openBackend('host');
  try {
    const w = b.alloc('device', bytes);
    const x = b.alloc('device', m.hidden * 4);
    const y = b.alloc('device', rowsW * 4);
    b.write(w, 0, new Uint8Array(bytes));
    b.write(x, 0, new Float32Array(m.hidden));
    const [e0, e1] = [b.createEvent(), b.createEvent()];
    const reps = 5;
    b.gemv('compute', { w, x, y, rows: rowsW, cols: m.hidden }); // warm
    await b.synchronize();
    const cpu0 = process.cpuUsage();
    b.record('compute', e0);
    b.gemv('compute', { w, x, y, rows: rowsW, cols: m.hidden }, reps);
    b.record('compute', e1);
    await b.synchronize();
    const cpu = process.cpuUsage(cpu0);
    const ms = b.elapsedMs(e0, e1) / reps;
    const GBps = bytes / ms / 1e6;
    const GBperCpuS = (bytes * reps) / ((cpu.user + cpu.system) / 1e6) / 1e9;
    const stepBytes = m.layers * bytes + (m.other_weight_bytes > 0 ? Math.max(8, Math.round(m.other_weight_bytes / 4 / m.hidden)) * m.hidden * 2 : 0);
    const gemv = { model: m.name, layer_shape: `${rowsW}x${m.hidden}`, layer_bytes: bytes, ms_per_layer: Math.round(ms * 100) / 100, GBps: Math.round(GBps * 10) / 10, weight_bytes_per_step: stepBytes, gemv_s_per_step: Math.round((stepBytes / GBps / 1e9) * 1000) / 1000, GB_per_cpu_s: Math.round(GBperCpuS * 10) / 10, gemv_cpu_s_per_step: Math.round((stepBytes / GBperCpuS / 1e9) * 1000) / 1000, threads: b.info().hostThreads, load: load() };
    console.log(JSON.stringify({ gemv }));
    results.push({ gemv });
  } finally {
    b.close();
  }
  if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify({ trace, machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model }, results }, null, 2) + '\n');
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
