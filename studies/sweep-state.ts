/**
 * The resumable state of an unfinished sweep: a hidden sibling of the output directory,
 * `.NAME.partial/`, holding the sweep's files as they are made (runs/, traces/) and one record per
 * finished configuration in done/<key>.json (written durably: temp name, fsync, rename). A lock file
 * keeps two processes from writing it at once; a lock left by a killed process on this host is taken
 * over. When the sweep finishes, done/ and the lock are removed and the directory is renamed to NAME.
 */
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { checkOutDir, finishOutDir, processAlive, removeOrphanPartials } from '../sim/output-dir.js';
import { writeFileDurably } from './durable-file.js';

export interface SweepRecord {
  schema: 'kvtier-sweep-record/v1';
  key: string;
  id: string;
  version: string;
  code: string;
  row: Record<string, unknown>;
}

export interface OpenStateOptions {
  /** replace a finished output directory at the end */
  force: boolean;
  /** discard saved progress and start over */
  restart: boolean;
  /** files the sweep reads (the output may not hold them) */
  inputs: readonly string[];
  log: (line: string) => void;
}

/** The state folder of the sweep writing `out`. */
export function partialDirOf(out: string): string {
  const abs = resolve(out);
  return join(dirname(abs), `.${basename(abs)}.partial`);
}

export class SweepState {
  private locked = false;

  private constructor(
    readonly dir: string,
    private readonly lockFile: string,
  ) {}

  static open(out: string, opts: OpenStateOptions): SweepState {
    checkOutDir(out, opts.force, opts.inputs);
    const abs = resolve(out);
    fs.mkdirSync(dirname(abs), { recursive: true });
    for (const p of removeOrphanPartials(abs)) opts.log(`removed ${p} (left by a process that is gone)`);
    const dir = partialDirOf(abs);
    if (fs.existsSync(dir) && !fs.statSync(dir).isDirectory()) throw new Error(`${dir} exists and is not a directory; remove it or choose another --out`);
    fs.mkdirSync(dir, { recursive: true });
    const state = new SweepState(dir, join(dir, 'lock'));
    state.lock();
    if (opts.restart) {
      for (const e of fs.readdirSync(dir)) if (e !== 'lock') fs.rmSync(join(dir, e), { recursive: true, force: true });
    }
    fs.mkdirSync(join(dir, 'done'), { recursive: true });
    state.removeTemporaries();
    return state;
  }

  private lock(): void {
    const me = JSON.stringify({ pid: process.pid, host: hostname() }) + '\n';
    // the lock appears whole or not at all: written under a private name, then linked into place
    // (link fails when the lock exists), so no reader sees a half-written lock
    const mine = `${this.lockFile}.${process.pid}`;
    fs.writeFileSync(mine, me);
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          fs.linkSync(mine, this.lockFile);
          this.locked = true;
          return;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        }
        this.clearStaleLock();
      }
    } finally {
      fs.rmSync(mine, { force: true });
    }
    throw new Error(`${this.dir}: could not take the lock ${this.lockFile}`);
  }

  /** Remove the lock of a process that is gone; throw when its holder still runs (here or elsewhere). */
  private clearStaleLock(): void {
    let holder: { pid?: number; host?: string } = {};
    try {
      holder = JSON.parse(fs.readFileSync(this.lockFile, 'utf8'));
    } catch {
      // an unreadable lock (damaged, or from an older kvtier that wrote it in place) holds nothing
    }
    if (holder.host !== undefined && holder.host !== hostname()) {
      throw new Error(`${this.dir} is being written by process ${holder.pid} on host ${holder.host}; if that sweep is gone, delete ${this.lockFile}`);
    }
    if (typeof holder.pid === 'number' && processAlive(holder.pid)) {
      throw new Error(`${this.dir} is being written by another kvtier sweep (process ${holder.pid}); wait for it to end or stop it`);
    }
    fs.rmSync(this.lockFile, { force: true });
  }

  /** Temporary names (a leading dot) are what a killed process was writing: never whole, so dropped. */
  private removeTemporaries(): void {
    for (const sub of ['done', 'runs', 'traces']) {
      const d = join(this.dir, sub);
      if (!fs.existsSync(d)) continue;
      for (const e of fs.readdirSync(d)) if (e.startsWith('.')) fs.rmSync(join(d, e), { recursive: true, force: true });
    }
  }

  /** Every readable record; a record that does not parse is deleted. */
  records(): SweepRecord[] {
    const done = join(this.dir, 'done');
    const out: SweepRecord[] = [];
    for (const name of fs.readdirSync(done).sort()) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const p = join(done, name);
      try {
        const r = parseRecord(fs.readFileSync(p, 'utf8'));
        if (r.schema === 'kvtier-sweep-record/v1' && `${r.key}.json` === name && typeof r.id === 'string' && r.row && typeof r.row === 'object') {
          out.push(r);
          continue;
        }
      } catch {
        // not a record
      }
      fs.rmSync(p, { force: true });
    }
    return out;
  }

  save(r: SweepRecord): void {
    writeFileDurably(join(this.dir, 'done', `${r.key}.json`), stringifyRecord(r));
  }

  /** Forget a record, then remove its run directory. */
  drop(r: SweepRecord): void {
    fs.rmSync(join(this.dir, 'done', `${r.key}.json`), { force: true });
    const runDir = r.row.run_dir;
    if (typeof runDir === 'string' && runDir.startsWith('runs/')) fs.rmSync(join(this.dir, runDir), { recursive: true, force: true });
  }

  /** Remove what only the unfinished state needs and move the directory to `out`. */
  finish(out: string, force: boolean, inputs: readonly string[]): void {
    checkOutDir(out, force, inputs);
    this.release();
    // the saved records go only once the results are in place: a failed rename leaves a resumable state
    finishOutDir(this.dir, resolve(out));
    fs.rmSync(join(resolve(out), 'done'), { recursive: true, force: true });
  }

  /** Remove the state when it holds no finished configuration (nothing to resume). */
  discardIfEmpty(): boolean {
    const done = join(this.dir, 'done');
    if (fs.existsSync(done) && fs.readdirSync(done).some((n) => !n.startsWith('.'))) return false;
    fs.rmSync(this.dir, { recursive: true, force: true });
    this.locked = false;
    return true;
  }

  release(): void {
    if (!this.locked) return;
    fs.rmSync(this.lockFile, { force: true });
    this.locked = false;
  }
}

/** JSON that keeps NaN and infinities (a failed run's metrics) as they were. */
export function stringifyRecord(r: SweepRecord): string {
  return JSON.stringify(r, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? { $number: String(v) } : v), 2) + '\n';
}

export function parseRecord(text: string): SweepRecord {
  return JSON.parse(text, (_k, v) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && typeof v.$number === 'string' ? Number(v.$number) : v,
  ) as SweepRecord;
}
