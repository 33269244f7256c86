/**
 * The few sentences at the top of a sweep report, written from the numbers: how many runs
 * succeeded, and for each HBM budget the policy with the lowest median time between tokens
 * (and how far it is from the oracle bound) and the one with the highest recall.
 */
import type { SweepRow } from '../sim/metrics/summary.js';
import { formatNumber } from './format-cell.js';
import { formatPercent } from './format-units.js';
import { budgetLabel, sweepChartData, type ConfigPoint } from './sweep-chart-data.js';

export function sweepSummaryMarkdown(rows: SweepRow[], oracle: string): string {
  const failed = rows.filter((r) => r.status === 'failed').length;
  const ok = rows.length - failed;
  const out: string[] = [
    `${rows.length} configuration${rows.length === 1 ? '' : 's'}: **${ok}** succeeded` +
      (failed ? `, **${failed}** failed (left out of the charts; see the table of failed configurations).` : ', none failed.'),
  ];
  const data = sweepChartData(rows, oracle);
  if (data.points.length === 0) return out.join('\n\n');
  if (!data.series.hasOracle) out.push(`No \`${oracle}\` run in this sweep, so the charts show no bound.`);
  const wins = new Map<string, number>();
  for (const panel of data.panels) {
    const inPanel = data.points.filter((p) => p.panel === panel);
    const budgets = [...new Set(inPanel.map((p) => p.budget))].sort((a, b) => a - b);
    const items: string[] = [];
    for (const b of budgets) {
      const here = inPanel.filter((p) => p.budget === b);
      const online = here.filter((p) => !p.isOracle);
      const bound = here.find((p) => p.isOracle);
      const best = pick(online, (p) => p.tbt_p50_ms, 'min');
      if (!best) continue;
      wins.set(best.policy, (wins.get(best.policy) ?? 0) + 1);
      let s = `At **${budgetLabel(b)}** HBM: lowest TBT p50 **${best.policy}** (${ms(best.tbt_p50_ms)}, p99 ${ms(best.tbt_p99_ms)})`;
      if (bound && bound.tbt_p50_ms > 0) {
        const gap = best.tbt_p50_ms / bound.tbt_p50_ms - 1;
        s += gap <= 1e-9 ? ', matching the oracle bound' : `, ${formatPercent(round(gap, 3))} above the oracle bound (${ms(bound.tbt_p50_ms)})`;
      }
      const recall = pick(online, (p) => p.recall_mean, 'max');
      if (recall) s += `; highest recall **${recall.policy}** (${formatPercent(round(recall.recall_mean, 3))})`;
      items.push(`- ${s}.`);
    }
    if (items.length === 0) continue;
    out.push((data.panels.length > 1 ? `**${panel}**\n` : '') + items.join('\n'));
  }
  const ranked = [...wins.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const total = ranked.reduce((s, [, n]) => s + n, 0);
  if (ranked.length > 0 && total > 1) {
    const [policy, n] = ranked[0]!;
    out.push(`**${policy}** has the lowest median time between tokens in ${n} of ${total} budget points.`);
  }
  return out.join('\n\n');
}

function pick(points: ConfigPoint[], f: (p: ConfigPoint) => number, want: 'min' | 'max'): ConfigPoint | undefined {
  let best: ConfigPoint | undefined;
  for (const p of points) {
    const v = f(p);
    if (!Number.isFinite(v)) continue;
    if (!best || (want === 'min' ? v < f(best) : v > f(best))) best = p;
  }
  return best;
}

function ms(x: number): string {
  return `${formatNumber(x)} ms`;
}

function round(x: number, digits: number): number {
  const m = 10 ** digits;
  return Math.round(x * m) / m;
}
