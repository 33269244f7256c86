/**
 * The sweep report in a real browser (Debian's Chromium through playwright-core, offline, from
 * file://): it renders, shows the recommendation and the Pareto chart, logs no error, fetches
 * nothing, and its results table sorts and filters. Skips, saying so, where /usr/bin/chromium is absent.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildSweepReport } from '../../reports/sweep-report.js';
import type { SweepRow } from '../../sim/metrics/summary.js';
// @ts-expect-error: a plain .mjs script without type declarations
import { CHROMIUM, inspectReport } from '../../perf/report-screenshot.mjs';
import { row, stepsFor, sweepRows } from './fixtures.js';

const hasChromium = existsSync(CHROMIUM as string);
const dir = mkdtempSync(join(tmpdir(), 'kvtier-browser-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The fixtures plus a policy 10x slower than the rest, so the page has a sentence on it. */
function rows(): SweepRow[] {
  const slow = [0.1, 0.25, 0.5].map((b) =>
    row('synapsevm', b, {
      tbt_p50_ms: 300, tbt_p99_ms: 320, tokens_per_s: 3.3, stall_ms: 9000, transfer_ms: 9500,
      masking_efficiency: 0.05, recall_mean: 1, recall_min: 1, h2d_MiB: 6000, d2h_MiB: 10,
    }),
  );
  return [...sweepRows(), ...slow];
}

describe.skipIf(!hasChromium)(
  hasChromium ? 'sweep report in Chromium' : `sweep report in Chromium (skipped: ${String(CHROMIUM)} is not installed; apt-get install -y chromium)`,
  () => {
    it('renders at 1400 px and 390 px: recommendation, Pareto SVG, working table, no errors, no network', async () => {
      const index = await buildSweepReport({
        outDir: dir,
        title: 'browser check',
        rows: rows(),
        steps: stepsFor,
        breakdown: (r) =>
          r.policy === 'synapsevm'
            ? { steps: 30, compute_ms: 300, stall_ms: 8700, transfer_ms: 9500, bytes: { 'pcie:dram->hbm': 3 * 2 ** 30, 'nvme:nvme->dram': 2 ** 30 } }
            : undefined,
      });
      const seen = (await inspectReport(index, { filter: 'quest 25%' })) as { widths: Record<string, any> };
      for (const width of ['1400', '390']) {
        const s = seen.widths[width];
        expect(s.errors, width).toEqual([]);
        expect(s.blocked, width).toEqual([]);
        expect(s.recommendation).toContain('Quality target');
        expect(s.recommendation).toContain('At 10% HBM use synapsevm: 300 ms per token, recall 100%. h2o is faster (26.25 ms) but its recall is 89.2%.');
        expect(s.slowPolicies).toContain('97% of its step time is waiting for memory (compute 3%)');
        expect(s.paretoSvg, width).toBe(true);
        expect(s.pageOverflowX, `${width}: the page scrolls sideways`).toBeLessThanOrEqual(0);
        expect(s.sortableRows).toBe(15);
        // TBT p50 sorted descending: the slow policy first
        expect(s.sortedTbt).toEqual(['300', '300', '300']);
        expect(s.filtered).toBe('1 of 15 rows'); // every word must match: quest at 25% only
      }
    }, 60_000);
  },
);
