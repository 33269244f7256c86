/**
 * Runs a sweep: generates the grid's synthetic traces, runs every configuration in parallel on a
 * piscina pool (one worker per core by default, results kept in grid order whatever finishes first),
 * records failures as rows with their error, writes results.{json,csv,arrow} and the report page.
 * The sweep directory appears whole at the end (written to a temporary sibling, then renamed).
 */
import * as fs from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { table, toArrowIPC, toCSV } from 'arquero';
import cliProgress from 'cli-progress';
import { Piscina } from 'piscina';
import { generateTrace } from '../../traces/generator.js';
import type { SweepRow } from '../metrics/summary.js';
import { abortOutDir, finishOutDir, startOutDir } from '../output-dir.js';
import { writeSweepReport } from './sweep-results.js';
import { runServeConfig, writeServeSweepReport, type ServeSweepRow } from './serve-sweep.js';
import { expandServeSweep, type ServeSweepSpec } from './serve-sweep-spec.js';
import { expandSweep, readAnySweepSpec, type SweepConfig, type SweepSpec } from './sweep-spec.js';
import { runSweepTask, type SweepTask } from './sweep-worker.js';

export interface SweepOptions {
  out: string;
  /** 0 = run inline in this thread; default: available cores */
  workers?: number;
  force?: boolean;
  /** run only configurations i where index % N === i (deterministic sharding) */
  shard?: { index: number; count: number };
  progress?: boolean;
  log?: (line: string) => void;
}

export async function runSweepFile(file: string, opts: SweepOptions): Promise<{ rows: { id: string; status: string; error: string }[]; dir: string }> {
  const spec = readAnySweepSpec(file);
  return 'kind' in spec && spec.kind === 'serve' ? runServeSweep(spec, opts, file) : runSweep(spec as SweepSpec, opts, file);
}

/** A serving sweep: same directory contract (results.*, runs/, index.html), same pool. */
export async function runServeSweep(spec: ServeSweepSpec, opts: SweepOptions, source = '(inline)'): Promise<{ rows: ServeSweepRow[]; dir: string }> {
  const out = resolve(opts.out);
  let configs = expandServeSweep(spec);
  if (opts.shard) configs = configs.filter((c) => c.index % opts.shard!.count === opts.shard!.index);
  const tmp = startOutDir(out, Boolean(opts.force), [source, ...spec.requests.filter((r) => r.includes('/'))]);
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  try {
    const workers = Math.min(opts.workers ?? availableParallelism(), configs.length);
    let done = 0;
    const report = (row: ServeSweepRow) => {
      done++;
      if (opts.progress !== false) log(`[${done}/${configs.length}] ${row.status === 'ok' ? 'ok    ' : 'FAILED'} ${row.id}${row.status === 'ok' ? '' : `: ${row.error}`}`);
      return row;
    };
    let rows: ServeSweepRow[];
    if (workers <= 1) rows = configs.map((c) => report(runServeConfig(spec, c, tmp)));
    else {
      const pool = new Piscina({ filename: workerFile('serve-sweep-worker.js'), maxThreads: workers, minThreads: workers });
      try {
        rows = await Promise.all(configs.map(async (c) => report((await pool.run({ spec, config: c, dir: tmp })) as ServeSweepRow)));
      } finally {
        await pool.destroy();
      }
    }
    writeResults(tmp, rows as never);
    fs.writeFileSync(join(tmp, 'sweep.json'), JSON.stringify({ source, spec, shard: opts.shard ?? null }, null, 2) + '\n');
    await writeServeSweepReport(tmp, spec, rows, `kvtier sweep ${source}`);
    finishOutDir(tmp, out);
    return { rows, dir: out };
  } catch (e) {
    abortOutDir(tmp);
    throw e;
  }
}

export async function runSweep(spec: SweepSpec, opts: SweepOptions, source = '(inline)'): Promise<{ rows: SweepRow[]; dir: string }> {
  const out = resolve(opts.out);
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  let configs = expandSweep(spec);
  if (opts.shard) configs = configs.filter((c) => c.index % opts.shard!.count === opts.shard!.index);
  const inputs = [source, ...spec.traces.flatMap((t) => (t.path ? [t.path] : [])), ...spec.hardware.filter((h) => h.endsWith('.json'))];
  const tmp = startOutDir(out, Boolean(opts.force), inputs);
  try {
    const tasks = prepareTraces(spec, configs, tmp, log);
    const rows = await runTasks(tasks, opts, log);
    writeResults(tmp, rows);
    fs.writeFileSync(join(tmp, 'sweep.json'), JSON.stringify({ source, spec, shard: opts.shard ?? null }, null, 2) + '\n');
    await writeSweepReport(tmp, spec.name, rows, `kvtier sweep ${source}`);
    finishOutDir(tmp, out);
    return { rows, dir: out };
  } catch (e) {
    abortOutDir(tmp);
    throw e;
  }
}

function prepareTraces(spec: SweepSpec, configs: SweepConfig[], dir: string, log: (l: string) => void): SweepTask[] {
  const made = new Map<string, string>();
  return configs.map((c) => {
    let tracePath = c.trace.path;
    if (c.trace.generate) {
      const key = c.trace.name;
      if (!made.has(key)) {
        fs.mkdirSync(join(dir, 'traces'), { recursive: true });
        const p = join(dir, 'traces', `${key}.kvt`);
        generateTrace(p, { ...c.trace.generate, seed: c.seed } as never);
        log(`generated trace ${key}`);
        made.set(key, p);
      }
      tracePath = made.get(key)!;
    }
    return {
      id: c.id,
      seed: c.seed,
      sweepDir: dir,
      budgetLabel: c.budget,
      config: {
        trace: tracePath!,
        policy: c.policy.name,
        policy_options: c.policy.options,
        model: c.model ?? undefined,
        hardware: c.hardware,
        hbm_budget: c.budget,
        trace_steps: spec.trace_steps,
        copy_mode: spec.copy_mode,
      },
    };
  });
}

function workerFile(name = 'sweep-worker.js'): string {
  const here = fileURLToPath(new URL(`./${name}`, import.meta.url));
  if (fs.existsSync(here)) return here;
  // running from the TypeScript sources (tests): use the compiled worker
  const dist = fileURLToPath(new URL(`../../dist/sim/sweep/${name}`, import.meta.url));
  if (fs.existsSync(dist)) return dist;
  throw new Error(`sweep worker not found (looked at ${here} and ${dist}); run "npm run build" first`);
}

async function runTasks(tasks: SweepTask[], opts: SweepOptions, log: (l: string) => void): Promise<SweepRow[]> {
  const workers = Math.min(opts.workers ?? availableParallelism(), tasks.length);
  const bar = opts.progress && process.stderr.isTTY
    ? new cliProgress.SingleBar({ format: 'sweep [{bar}] {value}/{total} {id}', stream: process.stderr }, cliProgress.Presets.shades_classic)
    : null;
  bar?.start(tasks.length, 0, { id: '' });
  let done = 0;
  const report = (row: SweepRow) => {
    done++;
    if (bar) bar.update(done, { id: row.id });
    else if (opts.progress !== false) log(`[${done}/${tasks.length}] ${row.status === 'ok' ? 'ok    ' : 'FAILED'} ${row.id}${row.status === 'ok' ? '' : `: ${row.error}`}`);
  };
  try {
    if (workers <= 1) {
      return tasks.map((t) => {
        const row = runSweepTask(t);
        report(row);
        return row;
      });
    }
    const pool = new Piscina({ filename: workerFile(), maxThreads: workers, minThreads: workers });
    try {
      return await Promise.all(
        tasks.map(async (t) => {
          const row = (await pool.run(t)) as SweepRow;
          report(row);
          return row;
        }),
      );
    } finally {
      await pool.destroy();
    }
  } finally {
    bar?.stop();
  }
}

export function writeResults(dir: string, rows: object[]): void {
  fs.writeFileSync(join(dir, 'results.json'), JSON.stringify(rows, null, 2) + '\n');
  const cols: Record<string, unknown[]> = {};
  for (const k of Object.keys(rows[0] ?? {})) cols[k] = rows.map((r) => (r as unknown as Record<string, unknown>)[k]);
  const t = table(cols);
  fs.writeFileSync(join(dir, 'results.csv'), toCSV(t) + '\n');
  fs.writeFileSync(join(dir, 'results.arrow'), toArrowIPC(t, { format: 'file' }) as Uint8Array);
}
