import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSweepReport } from '../../reports/sweep-report.js';
import { sweepSummaryMarkdown } from '../../reports/sweep-summary-text.js';
import { stepsFor, sweepRows } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'kvtier-sweep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('buildSweepReport', () => {
  it('writes index.html with the failure listed, five charts (spec, SVG, PNG each) and the results', async () => {
    const outDir = join(dir, 'full');
    const index = await buildSweepReport({ outDir, title: 'Quickstart sweep', rows: sweepRows({ failed: true }), steps: stepsFor });
    expect(index).toBe(join(outDir, 'index.html'));
    const html = readFileSync(index, 'utf8');

    const files = readdirSync(join(outDir, 'charts')).sort();
    expect(files).toHaveLength(15);
    for (const name of ['tbt-vs-budget', 'recall-vs-budget', 'bytes-moved', 'stall-timeline', 'masking-vs-budget']) {
      for (const ext of ['.vl.json', '.svg', '.png']) expect(files).toContain(name + ext);
      expect(html).toContain(`href="charts/${name}.vl.json"`);
      expect(html).toContain(`href="charts/${name}.png"`);
    }
    expect(html.match(/<svg/g)).toHaveLength(5);

    // the failure: in its own table, with its (escaped) error, and in no chart
    const failed = html.slice(html.indexOf('<h2>Failed configurations</h2>'));
    expect(failed).toContain('<td>snapkv</td>');
    expect(failed).toContain('budget 0.1 &lt; sink + window (&lt;script&gt;alert(1)&lt;/script&gt;)');
    expect(html).not.toContain('<script');
    for (const f of files.filter((f) => f.endsWith('.vl.json'))) {
      expect(readFileSync(join(outDir, 'charts', f), 'utf8'), f).not.toContain('snapkv');
    }

    // results table: 12 successful rows, the oracle marked as the bound
    const results = html.slice(html.indexOf('<h2>Results</h2>'), html.indexOf('<h2>Failed configurations</h2>'));
    expect(results.match(/<tr><td>/g)).toHaveLength(12);
    expect(results).toContain('<td>oracle (bound)</td><td class="num">10%</td><td class="num">21</td>');
    expect(html).toContain('<strong>12</strong> succeeded, <strong>1</strong> failed');
  });

  it('without step rows: four charts, no timeline; a rebuild removes the old timeline', async () => {
    const outDir = join(dir, 'rebuild');
    await buildSweepReport({ outDir, title: 'x', rows: sweepRows(), steps: stepsFor });
    expect(readdirSync(join(outDir, 'charts'))).toHaveLength(15);
    const html = readFileSync(await buildSweepReport({ outDir, title: 'x', rows: sweepRows() }), 'utf8');
    expect(readdirSync(join(outDir, 'charts')).sort()).toEqual(
      ['bytes-moved', 'masking-vs-budget', 'recall-vs-budget', 'tbt-vs-budget'].flatMap((n) => [`${n}.png`, `${n}.svg`, `${n}.vl.json`]),
    );
    expect(html).not.toContain('Stall per decode step');
    expect(html).not.toContain('Failed configurations');
  });

  it('leaves files it does not own alone', async () => {
    const outDir = join(dir, 'own');
    mkdirSync(join(outDir, 'charts'), { recursive: true });
    writeFileSync(join(outDir, 'charts', 'mine.txt'), 'keep');
    await buildSweepReport({ outDir, title: 'x', rows: sweepRows() });
    expect(existsSync(join(outDir, 'charts', 'mine.txt'))).toBe(true);
  });

  it('all configurations failed: a page with the failures and no charts', async () => {
    const outDir = join(dir, 'none');
    const rows = sweepRows({ failed: true }).filter((r) => r.status === 'failed');
    const html = readFileSync(await buildSweepReport({ outDir, title: 'x', rows }), 'utf8');
    expect(html).toContain('No configuration succeeded');
    expect(html).toContain('<h2>Failed configurations</h2>');
    expect(html).not.toContain('<svg');
  });

  it('is byte-for-byte reproducible', async () => {
    const a = readFileSync(await buildSweepReport({ outDir: join(dir, 'r1'), title: 'x', rows: sweepRows(), steps: stepsFor }), 'utf8');
    const b = readFileSync(await buildSweepReport({ outDir: join(dir, 'r2'), title: 'x', rows: sweepRows(), steps: stepsFor }), 'utf8');
    expect(a).toBe(b);
  });
});

describe('summary text', () => {
  it('names the best policy per budget and its distance to the oracle bound', () => {
    const md = sweepSummaryMarkdown(sweepRows({ failed: true }), 'oracle');
    expect(md).toContain('13 configurations: **12** succeeded, **1** failed');
    // fixtures: h2o is fastest at every budget, 1.25x the oracle; quest has the best recall
    expect(md).toContain('- At **10%** HBM: lowest TBT p50 **h2o** (26.25 ms, p99 65.63 ms), 25% above the oracle bound (21 ms); highest recall **quest** (93.5%).');
    expect(md).toContain('**h2o** has the lowest median time between tokens in 3 of 3 budget points.');
  });

  it('says when there is no oracle to compare with', () => {
    const md = sweepSummaryMarkdown(sweepRows({ oracle: false }), 'oracle');
    expect(md).toContain('No `oracle` run in this sweep');
    expect(md).not.toContain('above the oracle');
  });
});
