/**
 * How a sweep's report page is written. The page is a report (reports/), a layer above the studies
 * that run sweeps, so the caller hands the writers in (the CLI passes reports/sweep-reporters.ts);
 * without them a sweep writes its results tables and no page.
 */
import type { SweepRow } from '../sim/metrics/summary.js';
import type { ServeSweepRow } from './serve-sweep.js';
import type { ServeSweepSpec } from './serve-sweep-spec.js';

export interface SweepReporter {
  /** write index.html (and charts/) of an attention sweep in `dir`; returns the page's path */
  attention(dir: string, title: string, rows: SweepRow[], generatedBy: string): Promise<string>;
  /** the same for a serving sweep */
  serve(dir: string, spec: ServeSweepSpec, rows: ServeSweepRow[], generatedBy: string): Promise<string>;
}
