/**
 * A real sweep process (the CLI, from the sources, as the tests import them) killed midway — once with SIGKILL, once with
 * SIGINT — and re-run: it reuses the configurations it had finished and ends with the same results
 * tables, byte for byte, as a run that was never interrupted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kvtierSnapshotArgs, snapshotSources } from '../helpers/kvtier-from-sources.js';

const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-resume-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

// every process of the test runs one copy of the code (saved results are kept only for the same code)
const code = snapshotSources(join(dir, 'code'));
const file = join(dir, 'resume.json');
fs.writeFileSync(
  file,
  JSON.stringify({
    name: 'resume',
    traces: [{ generate: { prompt_tokens: 1024, steps: 16 }, name: 'g' }],
    policies: ['h2o', 'lru-offload', 'nope'],
    budgets: ['10%', '15%', '20%', '25%', '30%', '35%'],
    hardware: ['h100-pcie5'],
    trace_steps: 1,
  }),
);
const TOTAL = 18;
const TABLES = ['results.csv', 'results.json', 'results.arrow'];
const done = (out: string) => {
  try {
    return fs.readdirSync(join(dir, `.${out}.partial`, 'done')).filter((n) => n.endsWith('.json') && !n.startsWith('.')).length;
  } catch {
    return 0;
  }
};

function start(out: string, workers: number): { child: ChildProcess; exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> } {
  const child = spawn(process.execPath, kvtierSnapshotArgs(code, 'sweep', file, '--out', join(dir, out), '--workers', String(workers)), { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((res) =>
    child.on('exit', (code, signal) => res({ code, signal, stdout, stderr })),
  );
  return { child, exit };
}

/** Send `signal` once at least `atLeast` configurations are saved; returns how many were saved then. */
async function killAfter(out: string, child: ChildProcess, atLeast: number, signal: NodeJS.Signals): Promise<number> {
  for (;;) {
    const n = done(out);
    if (n >= atLeast) {
      child.kill(signal);
      return n;
    }
    if (child.exitCode !== null) throw new Error(`the sweep ended before ${atLeast} configurations were saved`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('an interrupted sweep continues where it stopped', () => {
  it('after SIGKILL and after SIGINT, the re-run reuses what was saved and writes the same tables as an uninterrupted run', async () => {
    const whole = await start('whole', 0).exit;
    expect(whole.code).toBe(1); // the "nope" policy's configurations fail
    expect(whole.stdout).toMatch(new RegExp(`^12 of ${TOTAL} configurations ok; report: `));

    // SIGKILL: nothing runs after it; the state folder stays, with its lock
    const a = start('cut', 0);
    const savedAtKill = await killAfter('cut', a.child, 2, 'SIGKILL');
    expect((await a.exit).signal).toBe('SIGKILL');
    expect(fs.existsSync(join(dir, '.cut.partial', 'lock'))).toBe(true);
    expect(fs.existsSync(join(dir, 'cut'))).toBe(false);
    const afterKill = done('cut');
    expect(afterKill).toBeGreaterThanOrEqual(savedAtKill);
    expect(afterKill).toBeLessThan(TOTAL);

    // SIGINT (two workers): the workers stop, the state is left to resume and the output says where
    const b = start('cut', 2);
    await killAfter('cut', b.child, afterKill + 2, 'SIGINT');
    const bx = await b.exit;
    expect(bx.stderr).toContain(`resuming: reused ${afterKill} of ${TOTAL} configurations saved in ${join(dir, '.cut.partial')}`);
    expect(bx.code).toBe(130);
    const afterInt = done('cut');
    expect(bx.stderr).toContain(`kvtier: interrupted (SIGINT): ${afterInt} of ${TOTAL} configurations are saved in ${join(dir, '.cut.partial')}; run the same command again to continue`);
    expect(afterInt).toBeLessThan(TOTAL);
    expect(fs.existsSync(join(dir, '.cut.partial', 'lock'))).toBe(false);
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('.cut.partial-'))).toEqual([]);

    // the same command finishes the sweep, reusing every saved configuration
    const c = start('cut', 0);
    const cx = await c.exit;
    expect(cx.code).toBe(1);
    expect(cx.stderr).toContain(`resuming: reused ${afterInt} of ${TOTAL} configurations saved in ${join(dir, '.cut.partial')}`);
    expect(cx.stdout).toMatch(new RegExp(`^12 of ${TOTAL} configurations ok, ${afterInt} reused from an interrupted run; report: `));
    expect(cx.stderr.match(new RegExp(`^\\[\\d+/${TOTAL}\\] `, 'gm'))!.length).toBe(TOTAL - afterInt);
    for (const t of TABLES) expect(fs.readFileSync(join(dir, 'cut', t)), t).toEqual(fs.readFileSync(join(dir, 'whole', t)));
    expect(fs.readdirSync(join(dir, 'cut', 'runs')).sort()).toEqual(fs.readdirSync(join(dir, 'whole', 'runs')).sort());
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]);
  }, 300_000);
});
