/** The sweep report's tables: one row per successful configuration, and the failures with their error. */
import type { SweepRow } from '../sim/metrics/summary.js';
import { ORACLE_LABEL } from './chart-series.js';
import { formatBytes, formatPercent } from './format-units.js';
import type { PageSection } from './report-page.js';
import { compareStrings, panelDimsOf } from './sweep-chart-data.js';

type Table = NonNullable<PageSection['table']>;

export function resultsTable(rows: SweepRow[], oracle: string): Table {
  const ok = rows.filter((r) => r.status === 'ok');
  const dims = panelDimsOf(ok);
  const seeds = new Set(ok.map((r) => r.seed)).size > 1;
  const sorted = [...ok].sort(
    (a, b) =>
      dims.reduce((c, d) => c || compareStrings(a[d], b[d]), 0) ||
      a.hbm_budget_fraction - b.hbm_budget_fraction ||
      Number(a.policy === oracle) - Number(b.policy === oracle) ||
      compareStrings(a.policy, b.policy) ||
      a.seed - b.seed,
  );
  return {
    columns: [
      ...dims,
      'policy',
      'HBM budget',
      ...(seeds ? ['seed'] : []),
      'TBT p50 (ms)',
      'TBT p99 (ms)',
      'tokens/s',
      'stall (ms)',
      'masking',
      'recall mean',
      'recall min',
      'quant error',
      'bytes moved',
      'J/token',
    ],
    rows: sorted.map((r) => [
      ...dims.map((d) => r[d]),
      r.policy === oracle ? boundName(r.policy) : r.policy,
      formatPercent(r.hbm_budget_fraction),
      ...(seeds ? [r.seed] : []),
      r.tbt_p50_ms,
      r.tbt_p99_ms,
      r.tokens_per_s,
      r.stall_ms,
      formatPercent3(r.masking_efficiency),
      r.recall_mean,
      r.recall_min,
      r.quant_error_mean ?? null,
      formatBytes(r.bytes_total),
      r.energy_j_per_token ?? null,
    ]),
  };
}

export function failuresTable(rows: SweepRow[]): Table | undefined {
  const failed = rows.filter((r) => r.status === 'failed');
  if (failed.length === 0) return undefined;
  return {
    columns: ['id', 'trace', 'policy', 'model', 'hardware', 'HBM budget', 'seed', 'error'],
    rows: failed.map((r) => [
      r.id,
      r.trace,
      r.policy,
      r.model,
      r.hardware,
      formatPercent(r.hbm_budget_fraction),
      r.seed,
      r.error || '(no message)',
    ]),
  };
}

/** "oracle (bound)" for the default oracle, "belady (bound)" for another name. */
function boundName(policy: string): string {
  return policy === 'oracle' ? ORACLE_LABEL : `${policy} (bound)`;
}

/** A share with one decimal, e.g. "97.3%". */
function formatPercent3(x: number): string {
  return Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : '—';
}
