/**
 * Runs a sweep's configurations so that an interrupted sweep continues where it stopped: every
 * finished configuration is saved at once (its run directory fsync'd, then its record written
 * durably) in the sweep's state folder, and a re-run of the same command reuses each saved result
 * whose configuration key, id and kvtier code match, and runs the rest. SIGINT and SIGTERM stop the
 * workers and leave the state folder to be picked up; it is removed when the sweep finishes.
 */
import { setMaxListeners } from 'node:events';
import * as fs from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { CodeFingerprint } from './code-fingerprint.js';
import { fsyncTree } from './durable-file.js';
import type { Column } from './results-schema.js';
import { SweepState, type SweepRecord } from './sweep-state.js';
import { sweepPool, type WorkerKind } from './worker-pool.js';
import { writeResults } from './write-results.js';

export interface DurableOptions {
  out: string;
  /** 0 = run inline in this thread; default: available cores */
  workers?: number;
  force?: boolean;
  /** discard saved progress of an interrupted run and start over */
  restart?: boolean;
  progress?: boolean;
  /** called as configurations finish (done of total, the finished one's id); replaces the per-configuration log lines */
  onProgress?: (done: number, total: number, label?: string) => void;
  log?: (line: string) => void;
}

/** A row as every sweep kind writes it. */
export interface BaseRow {
  id: string;
  status: string;
  error: string;
  run_dir: string;
}

export interface Job {
  id: string;
  key: string;
}

export interface DurableSweep<Task, Row extends BaseRow> {
  jobs: Job[];
  columns: readonly Column[];
  worker: WorkerKind;
  fingerprint: CodeFingerprint;
  /** files the sweep reads (the output directory may not hold them) */
  inputs: readonly string[];
  /** make what the runs need inside the state folder; returns one task per pending job */
  prepare(dir: string, pending: Job[]): Task[];
  runInline(task: Task): Row;
  /** write sweep.json, the report and anything else beside the results tables */
  finish(dir: string, rows: Row[]): Promise<void>;
}

/** A sweep stopped by a signal; its finished configurations are saved in `stateDir`. */
export class SweepInterrupted extends Error {
  constructor(
    readonly signal: NodeJS.Signals,
    readonly stateDir: string,
    readonly saved: number,
    readonly total: number,
  ) {
    super(`interrupted (${signal}): ${saved} of ${total} configurations are saved in ${stateDir}; run the same command again to continue (--restart starts over)`);
  }
}

export interface DurableResult<Row> {
  rows: Row[];
  dir: string;
  reused: number;
}

export async function runDurableSweep<Task, Row extends BaseRow>(sweep: DurableSweep<Task, Row>, opts: DurableOptions): Promise<DurableResult<Row>> {
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const force = Boolean(opts.force);
  const state = SweepState.open(opts.out, { force, restart: Boolean(opts.restart), inputs: sweep.inputs, log });
  const { fingerprint: fp } = sweep;
  const rows = new Map<string, Row>();
  let saved = 0;
  const stop = { signal: null as NodeJS.Signals | null, abort: new AbortController() };
  // every queued task listens on the one signal
  setMaxListeners(0, stop.abort.signal);
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.signal) return;
    stop.signal = signal;
    log(`${signal}: stopping the workers...`);
    stop.abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const wanted = new Map(sweep.jobs.map((j) => [j.key, j]));
    let otherCode = 0;
    let otherConfig = 0;
    for (const r of state.records()) {
      const job = wanted.get(r.key);
      const sameCode = r.code === fp.code && r.version === fp.version;
      const runThere = r.row.status !== 'ok' || (typeof r.row.run_dir === 'string' && fs.existsSync(join(state.dir, r.row.run_dir)));
      if (job && job.id === r.id && sameCode && runThere) {
        rows.set(r.key, r.row as unknown as Row);
        continue;
      }
      if (!job || job.id !== r.id) otherConfig++;
      else if (!sameCode) otherCode++;
      state.drop(r);
    }
    saved = rows.size;
    if (saved > 0) log(`resuming: reused ${saved} of ${sweep.jobs.length} configurations saved in ${state.dir}`);
    if (otherConfig > 0) log(`discarded ${otherConfig} saved results of configurations that are not in this sweep`);
    if (otherCode > 0) log(`discarded ${otherCode} saved results computed by another kvtier build (now ${fp.version}, code ${fp.code}); running them again`);
    const reused = saved;

    const pending = sweep.jobs.filter((j) => !rows.has(j.key));
    const tasks = sweep.prepare(state.dir, pending);
    const finished = (job: Job, row: Row, durable: boolean) => {
      rows.set(job.key, row);
      if (!durable) return;
      if (row.status === 'ok' && row.run_dir) fsyncTree(join(state.dir, row.run_dir));
      const rec: SweepRecord = { schema: 'kvtier-sweep-record/v1', key: job.key, id: job.id, version: fp.version, code: fp.code, row: row as unknown as Record<string, unknown> };
      state.save(rec);
      saved++;
    };
    await runJobs(sweep, pending, tasks, opts, log, stop, finished, reused);
    if (stop.signal) throw new SweepInterrupted(stop.signal, state.dir, saved, sweep.jobs.length);

    const all = sweep.jobs.map((j) => rows.get(j.key)!);
    removeUnlisted(join(state.dir, 'runs'), new Set(all.map((r) => r.run_dir.replace(/^runs\//, ''))));
    writeResults(state.dir, sweep.columns, all);
    await sweep.finish(state.dir, all);
    state.finish(opts.out, force, sweep.inputs);
    return { rows: all, dir: opts.out, reused };
  } catch (e) {
    state.release();
    if (e instanceof SweepInterrupted) throw e;
    if (!state.discardIfEmpty()) {
      (e as Error).message += ` (${saved} finished configurations are saved in ${state.dir}; run the same command again to continue)`;
    }
    throw e;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

async function runJobs<Task, Row extends BaseRow>(
  sweep: DurableSweep<Task, Row>,
  jobs: Job[],
  tasks: Task[],
  opts: DurableOptions,
  log: (l: string) => void,
  stop: { signal: NodeJS.Signals | null; abort: AbortController },
  finished: (job: Job, row: Row, durable: boolean) => void,
  reused: number,
): Promise<void> {
  const total = sweep.jobs.length;
  const workers = Math.min(opts.workers ?? availableParallelism(), jobs.length);
  const bar = opts.onProgress;
  bar?.(reused, total);
  let done = reused;
  const report = (row: Row) => {
    done++;
    if (bar) bar(done, total, row.id);
    else if (opts.progress !== false) log(`[${done}/${total}] ${row.status === 'ok' ? 'ok    ' : 'FAILED'} ${row.id}${row.status === 'ok' ? '' : `: ${row.error}`}`);
  };
  if (workers <= 1) {
    for (let i = 0; i < jobs.length && !stop.signal; i++) {
      const row = sweep.runInline(tasks[i]);
      finished(jobs[i], row, true);
      report(row);
      // let a pending SIGINT/SIGTERM handler run between configurations
      await new Promise((r) => setImmediate(r));
    }
    return;
  }
  const pool = sweepPool(sweep.worker, workers);
  try {
    await Promise.all(
      jobs.map(async (job, i) => {
        let row: Row;
        let durable = true;
        try {
          row = (await pool.run(tasks[i], { signal: stop.abort.signal })) as Row;
        } catch (e) {
          if (stop.signal) return;
          // the worker died (out of memory, a crash): a failed row, not saved, so a re-run tries again
          row = { ...failedRow(job), error: `worker failed: ${errorText(e)}` } as unknown as Row;
          durable = false;
        }
        finished(job, row, durable);
        report(row);
      }),
    );
  } finally {
    await pool.destroy();
  }
}

function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  const o = e as { message?: unknown; code?: unknown } | null;
  return String(o?.message ?? o?.code ?? e);
}

function failedRow(job: Job): BaseRow {
  return { id: job.id, status: 'failed', error: '', run_dir: '' };
}

/** Remove entries of `dir` that no row points to (runs of configurations no longer in the sweep, temporaries). */
function removeUnlisted(dir: string, keep: Set<string>): void {
  if (!fs.existsSync(dir)) return;
  for (const e of fs.readdirSync(dir)) if (!keep.has(e)) fs.rmSync(join(dir, e), { recursive: true, force: true });
}
