/**
 * The answer at the top of a sweep report: per trace / hardware and HBM budget, which policy to
 * run (the fastest that meets the quality target), as sentences and as a table; and one sentence
 * per policy that is far slower than the others, saying where its time goes.
 */
import { formatNumber } from './format-cell.js';
import { formatPercent } from './format-units.js';
import { findOutliers, outlierSentence, worstPerPolicy, type RunBreakdown } from './outliers.js';
import { recommend, targetMiss, type QualityTarget, type Recommendation } from './recommend.js';
import type { PageSection } from './report-page.js';
import { budgetLabel, type ConfigPoint, type SweepChartData } from './sweep-chart-data.js';

type Table = NonNullable<PageSection['table']>;

/** Online policies below 100% HBM: the candidates (the oracle knows the future; references are not budget points). */
export function candidatesOf(data: SweepChartData): ConfigPoint[] {
  return data.points.filter((p) => !p.isOracle && !p.isReference);
}

export function recommendations(data: SweepChartData, target: QualityTarget): Recommendation<ConfigPoint>[] {
  return recommend(candidatesOf(data), target);
}

export function targetSentence(target: QualityTarget, data: SweepChartData): string {
  const refs = [...new Set(data.points.filter((p) => p.isReference).map((p) => `\`${p.policy}\``))];
  return (
    `**Quality target:** mean attention recall ≥ ${pct(target.recallMin)} and mean quantization error ≤ ${target.quantErrorMax}. ` +
    'At each HBM budget the recommendation is the fastest policy (lowest median time between tokens) that meets it' +
    (data.series.hasOracle ? `; \`${data.oracle}\` knows the future and is only a bound` : '') +
    (refs.length ? `; ${refs.join(', ')} at 100% HBM is the reference` : '') +
    '.'
  );
}

/** One list per panel: an item per budget. */
export function recommendationMarkdown(data: SweepChartData, target: QualityTarget): string {
  const recs = recommendations(data, target);
  const out: string[] = [];
  for (const panel of data.panels) {
    const ref = data.points.find((p) => p.panel === panel && p.isReference);
    const sentences = recs.filter((r) => r.panel === panel).map((r) => sentenceFor(r, target, ref));
    if (sentences.length === 0) continue;
    out.push((data.panels.length > 1 ? `**${panel}**\n` : '') + sentences.map((x) => `- ${x}`).join('\n'));
  }
  return out.join('\n\n');
}

function sentenceFor(r: Recommendation<ConfigPoint>, target: QualityTarget, ref: ConfigPoint | undefined): string {
  const at = `At ${budgetLabel(r.budget)} HBM`;
  let s: string;
  if (r.pick) {
    const p = r.pick;
    s = `${at} use **${p.policy}**: ${ms(p.tbt_p50_ms)} per token, recall ${pct(p.recall_mean)}`;
    if (ref && ref.tbt_p50_ms > 0) s += ` (${times(p.tbt_p50_ms / ref.tbt_p50_ms)} ${ref.policy}'s ${ms(ref.tbt_p50_ms)})`;
    s += '.';
  } else {
    const c = r.closest!;
    s = `${at} no policy meets the target; closest is **${c.policy}** (${ms(c.tbt_p50_ms)}, ${quality(c)}).`;
  }
  if (r.fastest && r.fastest !== r.closest) {
    const f = r.fastest;
    s += ` ${f.policy} is faster (${ms(f.tbt_p50_ms)}) but ${miss(f, target)}.`;
  }
  return s;
}

/** What a candidate misses: "its recall is 54%" or "its quant error is 0.238". */
function miss(c: ConfigPoint, t: QualityTarget): string {
  const parts: string[] = [];
  if (c.recall_mean < t.recallMin) parts.push(`its recall is ${pct(c.recall_mean)}`);
  if (Number.isFinite(c.quant_error_mean) && c.quant_error_mean > t.quantErrorMax) parts.push(`its quant error is ${formatNumber(c.quant_error_mean)}`);
  return parts.join(' and ') || `it misses the target by ${formatNumber(targetMiss(c, t))}×`;
}

function quality(c: ConfigPoint): string {
  return `recall ${pct(c.recall_mean)}` + (Number.isFinite(c.quant_error_mean) ? `, quant error ${formatNumber(c.quant_error_mean)}` : '');
}

export function recommendationTable(data: SweepChartData, target: QualityTarget): Table {
  const dims = data.panelDims;
  const recs = recommendations(data, target);
  return {
    columns: [...dims, 'HBM budget', 'recommended', 'TBT p50 (ms)', 'recall mean', 'quant error', 'meet the target', 'faster, misses the target'],
    rows: recs.map((r) => {
      const p = r.pick ?? r.closest!;
      const panelCells = dims.map((d) => p.rows[0]![d]);
      return [
        ...panelCells,
        budgetLabel(r.budget),
        r.pick ? p.policy : `none (closest: ${p.policy})`,
        p.tbt_p50_ms,
        pct(p.recall_mean),
        Number.isFinite(p.quant_error_mean) ? p.quant_error_mean : null,
        `${r.meeting} of ${r.candidates}`,
        r.fastest && r.fastest !== r.closest ? `${r.fastest.policy} (${formatNumber(r.fastest.tbt_p50_ms)} ms)` : '—',
      ];
    }),
  };
}

/** Sentences on policies far slower than the others, or undefined when there is none. */
export function outliersMarkdown(data: SweepChartData, breakdown: (p: ConfigPoint) => RunBreakdown | undefined): string | undefined {
  const points = candidatesOf(data).map((p) => ({ ...p, breakdown: breakdown(p) }));
  const worst = worstPerPolicy(findOutliers(points));
  if (worst.length === 0) return undefined;
  return worst.map((w) => `- ${outlierSentence(w.worst, w.others)}`).join('\n');
}

function pct(x: number): string {
  return formatPercent(Math.round(x * 1000) / 1000);
}

function ms(x: number): string {
  return `${formatNumber(x)} ms`;
}

function times(r: number): string {
  return `${r >= 10 ? r.toFixed(0) : r.toFixed(1)}×`;
}
