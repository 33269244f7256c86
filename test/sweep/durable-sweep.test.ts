import * as fs from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { runDurableSweep, type BaseRow, type DurableSweep, type Job } from '../../studies/durable-sweep.js';
import { parseRecord, partialDirOf, SweepState, stringifyRecord, type SweepRecord } from '../../studies/sweep-state.js';

const root = fs.mkdtempSync(join(tmpdir(), 'kvtier-durable-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

interface Row extends BaseRow {
  value: number;
}

const COLUMNS = [
  { name: 'id', type: 'string' as const },
  { name: 'status', type: 'string' as const },
  { name: 'error', type: 'string' as const },
  { name: 'value', type: 'number' as const },
  { name: 'run_dir', type: 'string' as const },
];

/** A sweep whose configuration i computes value = 10 * i (+ offset) and writes runs/<id>/v.txt; `failAt` throws there. */
function fakeSweep(jobs: Job[], opts: { code?: string; failAt?: string; ran?: string[] } = {}): DurableSweep<{ job: Job; dir: string }, Row> {
  return {
    jobs,
    columns: COLUMNS,
    worker: 'sweep',
    fingerprint: { version: '0.1.0', code: opts.code ?? 'code-a' },
    inputs: [],
    prepare: (dir, pending) => pending.map((job) => ({ job, dir })),
    runInline: ({ job, dir }) => {
      if (job.id === opts.failAt) throw new Error(`stopped at ${job.id}`);
      opts.ran?.push(job.id);
      fs.mkdirSync(join(dir, 'runs', job.id), { recursive: true });
      fs.writeFileSync(join(dir, 'runs', job.id, 'v.txt'), job.key);
      return { id: job.id, status: 'ok', error: '', value: Number(job.id.slice(1)) * 10, run_dir: `runs/${job.id}` };
    },
    finish: async () => {},
  };
}

const jobs = (keys: string[]): Job[] => keys.map((key, i) => ({ id: `c${i}`, key }));
const quiet = { workers: 0, progress: false, log: () => {} };

describe('durable sweep state', () => {
  it('saves each finished configuration; a re-run reuses exactly those and runs the rest', async () => {
    const out = join(root, 'a');
    const state = partialDirOf(out);
    await expect(runDurableSweep(fakeSweep(jobs(['k0', 'k1', 'k2', 'k3']), { failAt: 'c2' }), { out, ...quiet })).rejects.toThrow(
      `stopped at c2 (2 finished configurations are saved in ${state}; run the same command again to continue)`,
    );
    expect(fs.readdirSync(join(state, 'done')).sort()).toEqual(['k0.json', 'k1.json']);
    expect(fs.existsSync(join(state, 'lock'))).toBe(false);
    const ran: string[] = [];
    const log: string[] = [];
    const r = await runDurableSweep(fakeSweep(jobs(['k0', 'k1', 'k2', 'k3']), { ran }), { out, workers: 0, progress: false, log: (l) => log.push(l) });
    expect(ran).toEqual(['c2', 'c3']);
    expect(r.reused).toBe(2);
    expect(log).toContain(`resuming: reused 2 of 4 configurations saved in ${state}`);
    expect(r.rows.map((x) => x.value)).toEqual([0, 10, 20, 30]);
    expect(fs.existsSync(state)).toBe(false);
    expect(fs.readdirSync(out).sort()).toEqual(['results.arrow', 'results.csv', 'results.json', 'results.parquet', 'runs']);
    expect(fs.readFileSync(join(out, 'results.csv'), 'utf8')).toBe('id,status,error,value,run_dir\nc0,ok,,0,runs/c0\nc1,ok,,10,runs/c1\nc2,ok,,20,runs/c2\nc3,ok,,30,runs/c3\n');
  });

  it('never reuses a saved result of another configuration or another kvtier build, and removes its run', async () => {
    const out = join(root, 'b');
    const state = partialDirOf(out);
    await expect(runDurableSweep(fakeSweep(jobs(['k0', 'k1', 'k2']), { failAt: 'c2' }), { out, ...quiet })).rejects.toThrow(/stopped at c2/);
    // c1 now means another configuration (its key changed): rerun, its old run removed first
    const ran: string[] = [];
    const log: string[] = [];
    const r = await runDurableSweep(fakeSweep(jobs(['k0', 'k1-changed', 'k2']), { ran }), { out, workers: 0, progress: false, log: (l) => log.push(l) });
    expect(ran).toEqual(['c1', 'c2']);
    expect(r.reused).toBe(1);
    expect(log).toContain('discarded 1 saved results of configurations that are not in this sweep');
    expect(fs.readFileSync(join(out, 'runs', 'c1', 'v.txt'), 'utf8')).toBe('k1-changed');
    // another build: nothing reused
    const out2 = join(root, 'b2');
    await expect(runDurableSweep(fakeSweep(jobs(['k0', 'k1']), { failAt: 'c1' }), { out: out2, ...quiet })).rejects.toThrow(/stopped at c1/);
    const ran2: string[] = [];
    const log2: string[] = [];
    const r2 = await runDurableSweep(fakeSweep(jobs(['k0', 'k1']), { code: 'code-b', ran: ran2 }), { out: out2, workers: 0, progress: false, log: (l) => log2.push(l) });
    expect(ran2).toEqual(['c0', 'c1']);
    expect(r2.reused).toBe(0);
    expect(log2).toContain('discarded 1 saved results computed by another kvtier build (now 0.1.0, code code-b); running them again');
    expect(fs.existsSync(state)).toBe(false);
  });

  it('--restart discards saved progress; --force is needed to replace a finished directory and keeps saved progress', async () => {
    const out = join(root, 'c');
    await expect(runDurableSweep(fakeSweep(jobs(['k0', 'k1']), { failAt: 'c1' }), { out, ...quiet })).rejects.toThrow(/stopped at c1/);
    const ran: string[] = [];
    await runDurableSweep(fakeSweep(jobs(['k0', 'k1']), { ran }), { out, ...quiet, restart: true });
    expect(ran).toEqual(['c0', 'c1']);
    await expect(runDurableSweep(fakeSweep(jobs(['k0', 'k1'])), { out, ...quiet })).rejects.toThrow(`${out} already exists; pass --force to replace it`);
    expect(fs.existsSync(partialDirOf(out))).toBe(false);
    const ran2: string[] = [];
    const r = await runDurableSweep(fakeSweep(jobs(['k0', 'k1', 'k2']), { ran: ran2 }), { out, ...quiet, force: true });
    expect(ran2).toEqual(['c0', 'c1', 'c2']);
    expect(r.rows.length).toBe(3);
  });

  it('a failure before any configuration finished leaves nothing behind', async () => {
    const out = join(root, 'd');
    await expect(runDurableSweep(fakeSweep(jobs(['k0', 'k1']), { failAt: 'c0' }), { out, ...quiet })).rejects.toThrow(/^stopped at c0$/);
    expect(fs.existsSync(partialDirOf(out))).toBe(false);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('refuses a state folder locked by a live process and takes over the lock of a dead one', () => {
    const out = join(root, 'e');
    const dir = partialDirOf(out);
    fs.mkdirSync(dir, { recursive: true });
    const host = hostname();
    fs.writeFileSync(join(dir, 'lock'), JSON.stringify({ pid: process.pid, host }));
    const opts = { force: false, restart: false, inputs: [], log: () => {} };
    expect(() => SweepState.open(out, opts)).toThrow(`${dir} is being written by another kvtier sweep (process ${process.pid}); wait for it to end or stop it`);
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    fs.writeFileSync(join(dir, 'lock'), JSON.stringify({ pid: gone, host }));
    const s = SweepState.open(out, opts);
    expect(JSON.parse(fs.readFileSync(join(dir, 'lock'), 'utf8')).pid).toBe(process.pid);
    s.release();
    expect(fs.existsSync(join(dir, 'lock'))).toBe(false);
  });

  it('records keep NaN and infinities through JSON', () => {
    const rec: SweepRecord = { schema: 'kvtier-sweep-record/v1', key: 'k', id: 'c0', version: '1', code: 'x', row: { a: Number.NaN, b: Infinity, c: -Infinity, d: 0.1 + 0.2, e: null } };
    const back = parseRecord(stringifyRecord(rec));
    expect(back.row.a).toBeNaN();
    expect(back.row.b).toBe(Infinity);
    expect(back.row.c).toBe(-Infinity);
    expect(back.row.d).toBe(0.30000000000000004);
    expect(back.row.e).toBe(null);
  });
});
