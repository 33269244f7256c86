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
  it('writes index.html with the failure listed, six charts (spec, SVG, PNG each) and the results', async () => {
    const outDir = join(dir, 'full');
    const index = await buildSweepReport({ outDir, title: 'Quickstart sweep', rows: sweepRows({ failed: true }), steps: stepsFor });
    expect(index).toBe(join(outDir, 'index.html'));
    const html = readFileSync(index, 'utf8');

    const files = readdirSync(join(outDir, 'charts')).sort();
    expect(files).toHaveLength(18);
    for (const name of ['pareto', 'tbt-vs-budget', 'recall-vs-budget', 'bytes-moved', 'stall-timeline', 'masking-vs-budget']) {
      for (const ext of ['.vl.json', '.svg', '.png']) expect(files).toContain(name + ext);
      expect(html).toContain(`href="charts/${name}.vl.json"`);
      expect(html).toContain(`href="charts/${name}.png"`);
    }
    expect(html.match(/<svg/g)).toHaveLength(6);

    // the failure: in its own table, with its (escaped) error, and in no chart
    const failed = html.slice(html.indexOf('<h2>Failed configurations</h2>'));
    expect(failed).toContain('<td>snapkv</td>');
    expect(failed).toContain('budget 0.1 &lt; sink + window (&lt;script&gt;alert(1)&lt;/script&gt;)');
    // the one script is the table's own, at the end of the body; no text from the rows reaches it
    expect(html.match(/<script/g)).toHaveLength(1);
    expect(html).not.toContain('<script>alert');
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
    expect(readdirSync(join(outDir, 'charts'))).toHaveLength(18);
    const html = readFileSync(await buildSweepReport({ outDir, title: 'x', rows: sweepRows() }), 'utf8');
    expect(readdirSync(join(outDir, 'charts')).sort()).toEqual(
      ['bytes-moved', 'masking-vs-budget', 'pareto', 'recall-vs-budget', 'tbt-vs-budget'].flatMap((n) => [`${n}.png`, `${n}.svg`, `${n}.vl.json`]),
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
  it('states the target and recommends, per budget, the fastest policy that meets it, or the closest', () => {
    const md = sweepSummaryMarkdown(sweepRows({ failed: true }), 'oracle', { recallMin: 0.93, quantErrorMax: 0.012 });
    expect(md).toContain('13 configurations: **12** succeeded, **1** failed');
    expect(md).toContain('**Quality target:** mean attention recall ≥ 93% and mean quantization error ≤ 0.012.');
    // fixtures at 10%: h2o 26.25 ms recall 89.2%, streaming 30.19 ms 76.2%, quest 34.13 ms 93.5%
    expect(md).toContain('At 10% HBM use **quest**: 34.13 ms per token, recall 93.5%. h2o is faster (26.25 ms) but its recall is 89.2%.');
    // at 50%: h2o 94%, fastest and meets it
    expect(md).toContain('At 50% HBM use **h2o**: 10.50 ms per token, recall 94%.');
    // the default target (99%): nobody meets it; quest is closest (loss 6.5% against h2o's 10.8%)
    const strict = sweepSummaryMarkdown(sweepRows(), 'oracle');
    expect(strict).toContain('At 10% HBM no policy meets the target; closest is **quest** (34.13 ms, recall 93.5%). h2o is faster (26.25 ms) but its recall is 89.2%.');
  });

  it('says when there is no oracle to compare with', () => {
    const md = sweepSummaryMarkdown(sweepRows({ oracle: false }), 'oracle');
    expect(md).toContain('No `oracle` run in this sweep');
    expect(md).not.toContain('only a bound');
  });
});
