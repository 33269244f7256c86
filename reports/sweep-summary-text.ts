/**
 * The opening of a sweep report, written from the numbers: how many runs succeeded, the quality
 * target, and per trace / hardware and HBM budget the policy to run (sweep-recommendation.ts).
 */
import type { SweepRow } from '../sim/metrics/summary.js';
import { DEFAULT_TARGET, type QualityTarget } from './recommend.js';
import { sweepChartData } from './sweep-chart-data.js';
import { recommendationMarkdown, targetSentence } from './sweep-recommendation.js';

export function sweepSummaryMarkdown(rows: SweepRow[], oracle: string, target: QualityTarget = DEFAULT_TARGET): string {
  const failed = rows.filter((r) => r.status === 'failed').length;
  const ok = rows.length - failed;
  const out: string[] = [
    `${rows.length} configuration${rows.length === 1 ? '' : 's'}: **${ok}** succeeded` +
      (failed ? `, **${failed}** failed (left out of the charts; see the table of failed configurations).` : ', none failed.'),
  ];
  const data = sweepChartData(rows, oracle);
  if (data.points.length === 0) return out.join('\n\n');
  out.push(targetSentence(target, data));
  const recs = recommendationMarkdown(data, target);
  if (recs) out.push(recs);
  if (!data.series.hasOracle) out.push(`No \`${oracle}\` run in this sweep, so the charts show no bound.`);
  return out.join('\n\n');
}
