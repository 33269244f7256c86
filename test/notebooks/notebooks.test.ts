/**
 * The notebooks in their short settings, each into a temp dir: the files they write, and a
 * property of the answer that can be checked by hand. `npm run notebooks` runs them in full.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { captureReport } from '../../notebooks/capture-report.js';
import { h2oBudgetWhatIf } from '../../notebooks/h2o-budget-what-if.js';

const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-notebooks-'));
beforeAll(() => {
  vi.spyOn(console, 'log').mockImplementation(() => {});
});
afterAll(() => {
  vi.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true });
});

const files = (d: string) => fs.readdirSync(d, { recursive: true, encoding: 'utf8' }).sort();

describe('notebooks, short settings', () => {
  it('h2o-budget-what-if: the answer is the first budget bisection found at the target, the one below it falls short', async () => {
    const out = join(dir, 'h2o');
    const r = await h2oBudgetWhatIf(['--steps', '16', '--prompt-tokens', '4096', '--out', out]);
    expect(files(out)).toEqual([
      'charts',
      'charts/recall-vs-budget.png',
      'charts/recall-vs-budget.svg',
      'charts/recall-vs-budget.vl.json',
      'charts/tbt-vs-budget.png',
      'charts/tbt-vs-budget.svg',
      'charts/tbt-vs-budget.vl.json',
      'index.html',
      'runs.csv',
    ]);
    expect(r.answer).not.toBeNull();
    const h2o = (b: number) => r.rows.find((x) => x.policy === 'h2o' && x.budget === b)!;
    expect(h2o(r.answer!).recall).toBeGreaterThanOrEqual(r.target);
    expect(h2o(r.below!).recall).toBeLessThan(r.target);
    // 8 halvings of the grid interval that brackets the target
    const grid = r.rows.filter((x) => x.policy === 'lru-offload').map((x) => x.budget);
    const hi = grid.find((b) => h2o(b).recall >= r.target)!;
    const lo = grid[grid.indexOf(hi) - 1] ?? 0.001;
    expect(r.answer! - r.below!).toBeCloseTo((hi - lo) / 256, 12);
    expect(r.answer).toBeGreaterThan(lo);
    expect(r.answer).toBeLessThanOrEqual(hi);
    // offloading loses no block: LRU offload's recall is 1 at every budget
    for (const x of r.rows.filter((x) => x.policy === 'lru-offload')) expect(x.recall).toBe(1);
    const csv = fs.readFileSync(join(out, 'runs.csv'), 'utf8').trimEnd().split('\n');
    expect(csv[0]).toBe('policy,budget,recall,recall_min,tbt_p50_ms,tbt_p99_ms');
    expect(csv).toHaveLength(r.rows.length + 1);
    expect(csv).toContain(`h2o,${r.answer},${h2o(r.answer!).recall},${h2o(r.answer!).recall_min},${h2o(r.answer!).tbt_p50},${h2o(r.answer!).tbt_p99}`);
    expect(fs.readFileSync(join(out, 'index.html'), 'utf8')).toContain(`H2O needs ${(r.answer! * 100).toFixed(1)}% of the FP16 KV cache in HBM`);
  });

  it('capture-report: every source and layer has its statistics; mass coverage grows with the share covered; the captured model has no sink', async () => {
    const out = join(dir, 'capture');
    const r = await captureReport(['--steps', '16', '--out', out]);
    expect(files(out)).toEqual(['captured-vs-generated.png', 'captured-vs-generated.svg', 'captured-vs-generated.vl.json', 'index.html', 'stats.csv']);
    const sources = [...new Set(r.rows.map((x) => x.source))];
    expect(sources).toEqual(['captured: brown-long-8k', 'captured: brown-multitopic-8k', 'captured: brown-needle-8k-d50', 'generated: captured-brown', 'generated: default']);
    expect(r.rows).toHaveLength(5 * 8 * 10);
    const v = (source: string, layer: number, stat: string) => r.rows.find((x) => x.source === source && x.layer === layer && x.stat === stat)!.value;
    for (const s of sources) {
      for (let l = 0; l < 8; l++) {
        expect(v(s, l, 'blocks for 50% of mass')).toBeLessThanOrEqual(v(s, l, 'blocks for 90% of mass'));
        expect(v(s, l, 'blocks for 90% of mass')).toBeLessThanOrEqual(v(s, l, 'blocks for 99% of mass'));
        expect(v(s, l, 'mass on the last block')).toBeLessThanOrEqual(v(s, l, 'mass on the last 4 blocks'));
        expect(v(s, l, 'mass on the last 4 blocks')).toBeLessThanOrEqual(v(s, l, 'mass on the last 16 blocks'));
        expect(v(s, l, 'mass on the last 16 blocks')).toBeLessThanOrEqual(1 + 1e-9);
        // no sink formed in the captured model: block 0 holds under 0.1% of the mass in every layer
        if (s.startsWith('captured')) expect(v(s, l, 'mass on block 0')).toBeLessThan(0.001);
      }
    }
    const csv = fs.readFileSync(join(out, 'stats.csv'), 'utf8').trimEnd().split('\n');
    expect(csv).toHaveLength(r.rows.length + 1);
    expect(csv[1]).toBe(`${r.rows[0].source},${r.rows[0].layer},${r.rows[0].stat},${r.rows[0].value}`);
    expect(fs.readFileSync(join(out, 'index.html'), 'utf8')).toContain('(16 steps, seed 1)');
  });

  it('a bad flag names the notebook and its flags', async () => {
    await expect(h2oBudgetWhatIf(['--step', '16'])).rejects.toThrow(/^notebooks\/h2o-budget-what-if\.ts: Unknown option '--step'.*flags: --out \(default reports\/h2o-budget\), --steps \(default 128\)/s);
    await expect(captureReport(['--steps', '1.5'])).rejects.toThrow('notebooks/capture-report.ts: --steps must be an integer >= 2 (got "1.5")');
  });
});
