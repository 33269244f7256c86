/**
 * The compact results table a finished attention sweep prints on stdout: one block per trace ×
 * hardware (× model and seed when the sweep has several), one line per HBM budget × policy in the
 * sweep's grid order within a budget, the budgets ascending. Columns: budget, policy, TBT p50 (ms),
 * mean attention recall, mean quantization error ("-" when the run has none), bytes moved. Failed
 * configurations are left out (the caller lists them with their errors).
 */
import type { SweepRow } from '../sim/metrics/summary.js';
import { formatBytes, formatPercent } from './format-units.js';

const HEAD = ['budget', 'policy', 'TBT p50 ms', 'recall', 'quant err', 'moved'] as const;
/** columns aligned right (the numbers) */
const RIGHT = [false, false, true, true, true, true];

function ms(x: number): string {
  if (!Number.isFinite(x)) return '-';
  return x >= 1000 ? x.toFixed(0) : x >= 100 ? x.toFixed(1) : x.toFixed(2);
}

const fixed3 = (x: number | undefined): string => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(3));

export function sweepConsoleTable(rows: readonly SweepRow[]): string {
  const ok = rows.filter((r) => r.status === 'ok');
  if (ok.length === 0) return '';
  const several = (f: (r: SweepRow) => unknown) => new Set(ok.map(f)).size > 1;
  const withModel = several((r) => r.model);
  const withSeed = several((r) => r.seed);
  const groupOf = (r: SweepRow) =>
    [r.trace, r.hardware, ...(withModel ? [r.model] : []), ...(withSeed ? [`seed ${r.seed}`] : [])].join(' · ');
  const groups = new Map<string, SweepRow[]>();
  for (const r of ok) {
    const g = groupOf(r);
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g)!.push(r);
  }
  const blocks: string[][][] = [];
  for (const members of groups.values()) {
    // stable: grid order within a budget
    const sorted = members.map((r, i) => ({ r, i })).sort((a, b) => a.r.hbm_budget_fraction - b.r.hbm_budget_fraction || a.i - b.i);
    blocks.push(sorted.map(({ r }) => [formatPercent(r.hbm_budget_fraction), r.policy, ms(r.tbt_p50_ms), fixed3(r.recall_mean), fixed3(r.quant_error_mean), formatBytes(r.bytes_total)]));
  }
  // one set of column widths for the whole table, so the blocks line up
  const widths = HEAD.map((h, c) => Math.max(h.length, ...blocks.flat().map((cells) => cells[c].length)));
  const line = (cells: readonly string[]) => '  ' + cells.map((s, c) => (RIGHT[c] ? s.padStart(widths[c]) : s.padEnd(widths[c]))).join('  ').trimEnd();
  const out: string[] = [];
  [...groups.keys()].forEach((g, k) => {
    if (k > 0) out.push('');
    out.push(g);
    out.push(line(HEAD));
    for (const cells of blocks[k]) out.push(line(cells));
  });
  return out.join('\n') + '\n';
}
