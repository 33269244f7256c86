import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertDistFresh } from '../helpers/dist-fresh.js';
import { expandSweep, parseSweepSpec } from '../../studies/sweep-spec.js';
import { runSweep } from '../../studies/run-sweep.js';
import { SWEEP_REPORTERS } from '../../reports/sweep-reporters.js';
import { workerEntry } from '../../studies/worker-pool.js';
import { kvtierArgs } from '../helpers/kvtier-from-sources.js';

// these tests spawn bin/kvtier.js, which runs dist/: it must be the code the sources compile to
beforeAll(assertDistFresh);

const dir = mkdtempSync(join(tmpdir(), 'kvtier-sweep-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const spec = (extra: Record<string, unknown> = {}) =>
  parseSweepSpec(
    {
      name: 'test',
      traces: [{ generate: { prompt_tokens: 512, steps: 12 }, name: 'gen' }],
      policies: ['full', 'h2o', 'no-such-policy'],
      budgets: ['20%', '50%'],
      hardware: ['h100-pcie5'],
      seeds: [1, 2],
      trace_steps: 2,
      ...extra,
    },
    join(dir, 'spec.json'),
  );

describe('sweep', () => {
  it('expands the grid in a fixed order; full runs once per trace at 100%', () => {
    const c = expandSweep(spec());
    // per seed: full x1 + h2o x2 + bad x2 = 5; two seeds
    expect(c.map((x) => x.id)).toEqual([
      '0000_gen-s1_h100-pcie5_full_100pct',
      '0001_gen-s1_h100-pcie5_h2o_20pct',
      '0002_gen-s1_h100-pcie5_h2o_50pct',
      '0003_gen-s1_h100-pcie5_no-such-policy_20pct',
      '0004_gen-s1_h100-pcie5_no-such-policy_50pct',
      '0005_gen-s2_h100-pcie5_full_100pct',
      '0006_gen-s2_h100-pcie5_h2o_20pct',
      '0007_gen-s2_h100-pcie5_h2o_50pct',
      '0008_gen-s2_h100-pcie5_no-such-policy_20pct',
      '0009_gen-s2_h100-pcie5_no-such-policy_50pct',
    ]);
  });

  it('rejects a malformed sweep file naming the field', () => {
    expect(() => parseSweepSpec({ traces: [], policies: ['h2o'], budgets: ['1%'], hardware: ['x'] }, 'f.json')).toThrow('f.json: "traces" must be a non-empty list');
    expect(() => parseSweepSpec({ traces: ['a'], policies: ['h2o'], budgets: ['1%'], hardware: ['x'], budget: 1 }, 'f.json')).toThrow(/unknown field "budget"/);
    const base = { traces: ['a.kvt'], policies: ['h2o'], budgets: ['10%'], hardware: ['x'] };
    expect(() => parseSweepSpec({ ...base, policies: [{ name: 'h2o', option: {} }] }, 'f.json')).toThrow('f.json: policies[0]: unknown field "option" (fields: name, options)');
    expect(() => parseSweepSpec({ ...base, traces: [{ path: 'a.kvt', generate: {} }] }, 'f.json')).toThrow(/traces\[0\]: give either "path" or "generate", not both/);
    expect(() => parseSweepSpec({ ...base, traces: [{ path: 'a.kvt', nmae: 'x' }] }, 'f.json')).toThrow(/traces\[0\]: unknown field "nmae"/);
    expect(() => parseSweepSpec({ ...base, budgets: ['10%', '-5'] }, 'f.json')).toThrow(/f\.json: budgets\[1\]: cannot read "-5"/);
  });

  it('records a failing configuration and finishes the others; results and report are written', async () => {
    const out = join(dir, 'inline');
    const { rows } = await runSweep(spec(), { out, workers: 0, progress: false, report: SWEEP_REPORTERS });
    expect(rows.map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'failed', 'failed', 'ok', 'ok', 'ok', 'failed', 'failed']);
    expect(rows[3].error).toMatch(/unknown policy "no-such-policy"/);
    for (const f of ['results.json', 'results.csv', 'results.arrow', 'index.html', 'sweep.json']) expect(fs.existsSync(join(out, f))).toBe(true);
    expect(fs.existsSync(join(out, rows[1].run_dir, 'summary.json'))).toBe(true);
    const html = fs.readFileSync(join(out, 'index.html'), 'utf8');
    expect(html).toContain('no-such-policy');
    // budgets: h2o at 50% keeps more of the mass than at 20%
    expect(rows[2].recall_mean).toBeGreaterThan(rows[1].recall_mean);
    expect(rows[0].recall_mean).toBe(1);
  });

  it('gives identical results in parallel (piscina workers) and inline, in grid order', async () => {
    const s = spec({ seeds: [3] });
    const a = await runSweep(s, { out: join(dir, 'par'), workers: 2, progress: false });
    const b = await runSweep(s, { out: join(dir, 'seq'), workers: 0, progress: false });
    expect(a.rows).toEqual(b.rows);
    expect(fs.readFileSync(join(dir, 'par', 'results.csv'), 'utf8')).toBe(fs.readFileSync(join(dir, 'seq', 'results.csv'), 'utf8'));
    // no reporter given: the tables and no page
    expect(fs.existsSync(join(dir, 'seq', 'index.html'))).toBe(false);
  });

  it('workers run the code the parent runs: the TypeScript workers from the sources, the compiled ones from dist/', () => {
    const src = new URL('../../studies/worker-pool.ts', import.meta.url).href;
    expect(workerEntry('sweep', src)).toEqual({ filename: join(process.cwd(), 'studies/ts-worker-entry.mjs'), name: 'sweep' });
    expect(workerEntry('serve', src)).toEqual({ filename: join(process.cwd(), 'studies/ts-worker-entry.mjs'), name: 'serve' });
    const entry = fs.readFileSync(join(process.cwd(), 'studies/ts-worker-entry.mjs'), 'utf8');
    expect(entry).toContain("sweep: './sweep-worker.ts', serve: './serve-sweep-worker.ts'");
    const built = join(dir, 'fake-dist', 'studies');
    fs.mkdirSync(built, { recursive: true });
    fs.writeFileSync(join(built, 'serve-sweep-worker.js'), '');
    expect(workerEntry('serve', `file://${join(built, 'worker-pool.js')}`)).toEqual({ filename: join(built, 'serve-sweep-worker.js'), name: 'default' });
    expect(() => workerEntry('sweep', `file://${join(built, 'worker-pool.js')}`)).toThrow(`sweep worker ${join(built, 'sweep-worker.js')} is missing; run "npm run build"`);
  });

  it('never replaces a file, the working directory or a directory holding the inputs, even with --force', async () => {
    const file = join(dir, 'plain.txt');
    fs.writeFileSync(file, 'keep me');
    await expect(runSweep(spec(), { out: file, workers: 0, progress: false, force: true })).rejects.toThrow(/exists and is not a directory/);
    expect(fs.readFileSync(file, 'utf8')).toBe('keep me');
    const home = join(dir, 'home');
    fs.mkdirSync(home);
    fs.copyFileSync('traces/bundled/llama-3-8b-2k-needle.kvt', join(home, 'n.kvt'));
    const s = parseSweepSpec({ traces: ['n.kvt'], policies: ['h2o'], budgets: ['20%'], hardware: ['h100-pcie5'] }, join(home, 'sweep.json'));
    await expect(runSweep(s, { out: home, workers: 0, progress: false, force: true }, join(home, 'sweep.json'))).rejects.toThrow(/holds the input/);
    expect(fs.existsSync(join(home, 'n.kvt'))).toBe(true);
  });

  it('the CLI sweep exits 1 when a configuration failed (results still written)', () => {
    const f = join(dir, 'one-bad.json');
    fs.writeFileSync(f, JSON.stringify({ traces: [join(process.cwd(), 'traces/bundled/llama-3-8b-2k-needle.kvt')], policies: ['h2o', 'nope'], budgets: ['20%'], hardware: ['h100-pcie5'] }));
    const r = spawnSync(process.execPath, kvtierArgs('sweep', f, '--out', join(dir, 'cli-sweep'), '--workers', '0'), { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(fs.existsSync(join(dir, 'cli-sweep', 'results.json'))).toBe(true);
    // piped: no progress bar (escape sequences, bar characters, ETA); the summary, the results table of what ran, the failures
    // eslint-disable-next-line no-control-regex
    expect(r.stderr + r.stdout).not.toMatch(/\x1b\[|[█░]|ETA/);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^1 of 2 configurations ok; report: /);
    expect(lines.slice(1, 4)).toEqual(['', 'llama-3-8b-2k-needle.kvt · h100-pcie5', '  budget  policy  TBT p50 ms  recall  quant err  moved']);
    const cells = lines[4].trim().split(/\s+/);
    expect(cells.slice(0, 2)).toEqual(['20%', 'h2o']);
    expect(cells.slice(2)).toEqual([expect.stringMatching(/^\d+\.\d\d$/), expect.stringMatching(/^0\.\d{3}$/), '0.000', '0', 'B']);
    expect(lines[4]).toHaveLength(lines[3].length); // aligned under the header
    expect(lines[5]).toMatch(/^FAILED 0001_llama-3-8b-2k-needle_h100-pcie5_nope_20pct: /);
    expect(lines).toHaveLength(6);
  });

  it('the CLI exits non-zero with a clear message on bad input and writes nothing', () => {
    const r = spawnSync(process.execPath, ['bin/kvtier.js', 'run', '--trace', join(dir, 'missing.kvt'), '--policy', 'h2o', '--out', join(dir, 'cli-out')], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/kvtier: error: .*missing\.kvt/);
    expect(fs.existsSync(join(dir, 'cli-out'))).toBe(false);
    const p = spawnSync(process.execPath, ['bin/kvtier.js', 'policies'], { encoding: 'utf8' });
    expect(p.status).toBe(0);
    for (const name of ['full', 'lru-offload', 'streaming-llm', 'h2o']) expect(p.stdout).toContain(name);
  });
});
