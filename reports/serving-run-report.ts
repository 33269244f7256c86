/**
 * The report page of one `kvtier serve` run: headline numbers, where prefix hits came from (per
 * tier), latency distributions (TTFT, per-request mean TBT) and served/refused requests over time.
 */
import { join, relative } from 'node:path';
import type { TopLevelSpec } from 'vega-lite';
import type { RequestRecord } from '../serving/request-record.js';
import type { ServeSummary } from '../serving/serve-summary.js';
import { chartSpec } from './chart-frame.js';
import { POLICY_PALETTE } from './chart-series.js';
import { formatBytes, formatPercent } from './format-units.js';
import { renderChart } from './render-chart.js';
import { writeReportPage, type PageSection } from './report-page.js';

const pct = (x: number) => formatPercent(Math.round(x * 1e4) / 1e4);
const ms = (x: number) => (Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x.toFixed(1)) : '—');

/** Share of input tokens hit in each tier and missed (computed). */
export function tierHitSpec(s: ServeSummary): TopLevelSpec {
  const values = [
    ...Object.entries(s.tier_hit_ratio).map(([tier, v]) => ({ where: `hit in ${tier}`, share: v })),
    { where: 'computed (miss)', share: 1 - s.prefix_hit_ratio },
  ];
  return chartSpec({
    title: 'Where the input tokens came from',
    subtitle: `prefix hit ratio ${pct(s.prefix_hit_ratio)} (unbounded cache: ${pct(s.theoretical_prefix_hit_ratio)})`,
    values,
    height: 160,
    encoding: {
      y: { field: 'where', type: 'nominal', sort: values.map((v) => v.where), title: null },
      x: { field: 'share', type: 'quantitative', title: 'share of served input tokens', axis: { format: '.0%' } },
    },
    layer: [
      { mark: { type: 'bar', color: POLICY_PALETTE[0] } },
      { mark: { type: 'text', align: 'left', dx: 3, fontSize: 11 }, encoding: { text: { field: 'share', type: 'quantitative', format: '.1%' } } },
    ],
  });
}

/** Empirical CDFs of TTFT and per-request mean TBT over served requests, at most 201 points each. */
export function latencyCdfSpec(records: readonly RequestRecord[]): TopLevelSpec {
  const values: object[] = [];
  const add = (metric: string, xs: number[]) => {
    const v = xs.filter(Number.isFinite).sort((a, b) => a - b);
    if (v.length === 0) return;
    const n = Math.min(201, v.length);
    for (let i = 0; i < n; i++) {
      const q = n === 1 ? 1 : i / (n - 1);
      values.push({ metric, ms: v[Math.min(v.length - 1, Math.round(q * (v.length - 1)))], share: q });
    }
  };
  const served = records.filter((r) => r.status === 'served');
  add('TTFT', served.map((r) => r.ttft_ms));
  add('mean TBT per request', served.map((r) => r.tbt_mean_ms));
  return chartSpec({
    title: 'Latency distribution of served requests',
    values,
    column: { field: 'metric', sort: ['TTFT', 'mean TBT per request'], title: null },
    resolve: { scale: { x: 'independent' } },
    encoding: {
      x: { field: 'ms', type: 'quantitative', title: 'ms' },
      y: { field: 'share', type: 'quantitative', title: 'share of served requests', axis: { format: '.0%' } },
    },
    layer: [{ mark: { type: 'line', interpolate: 'step-after', color: POLICY_PALETTE[0] } }],
  });
}

/** Requests by arrival minute: served and refused (backpressure) stacked. */
export function arrivalsSpec(records: readonly RequestRecord[]): TopLevelSpec {
  const bins = new Map<string, number>();
  for (const r of records) {
    const minute = Math.floor(r.arrival_ms / 60000);
    const key = `${minute}|${r.status === 'served' ? 'served' : `refused: ${r.reason}`}`;
    bins.set(key, (bins.get(key) ?? 0) + 1);
  }
  const values = [...bins.entries()].map(([k, n]) => {
    const [minute, outcome] = k.split('|');
    return { minute: Number(minute), outcome, requests: n };
  }).sort((a, b) => a.minute - b.minute || a.outcome.localeCompare(b.outcome));
  const outcomes = ['served', 'refused: queue_full', 'refused: queue_timeout', 'refused: exceeds_hbm'];
  return chartSpec({
    title: 'Requests by arrival minute',
    subtitle: 'refused = backpressure, with its reason',
    values,
    encoding: {
      x: { field: 'minute', type: 'quantitative', title: 'arrival (minute of the trace)' },
      y: { field: 'requests', type: 'quantitative', title: 'requests', stack: 'zero' },
      color: { field: 'outcome', type: 'nominal', title: null, scale: { domain: outcomes, range: ['#54a24b', '#e45756', '#f58518', '#b279a2'] } },
    },
    layer: [{ mark: { type: 'bar' } }],
  });
}

export function headlineTable(s: ServeSummary): { columns: string[]; rows: (string | number)[][] } {
  const rows: (string | number)[][] = [
    ['requests (served / refused)', `${s.requests} (${s.served} / ${s.refused})`],
    ['backpressure events', `${s.backpressure_events} (${Object.entries(s.backpressure).map(([k, v]) => `${k} ${v}`).join(', ')})`],
    ['prefix hit ratio', `${pct(s.prefix_hit_ratio)} (unbounded: ${pct(s.theoretical_prefix_hit_ratio)})`],
    ...Object.entries(s.tier_hit_ratio).map(([t, v]) => [`  hit in ${t}`, pct(v)] as [string, string]),
    ['TTFT p50 / p90 / p99 (ms)', `${ms(s.ttft_ms.p50)} / ${ms(s.ttft_ms.p90)} / ${ms(s.ttft_ms.p99)}`],
    ['TBT p50 / p90 / p99 (ms)', `${ms(s.tbt_ms.p50)} / ${ms(s.tbt_ms.p90)} / ${ms(s.tbt_ms.p99)}`],
    ['queueing p50 / p99 (ms)', `${ms(s.queue_ms.p50)} / ${ms(s.queue_ms.p99)}`],
    [`SLO attainment (TTFT ≤ ${s.slo.ttft_ms ?? '∞'} ms, mean TBT ≤ ${s.slo.tbt_ms ?? '∞'} ms)`, `${pct(s.slo.attainment)} (TTFT ${pct(s.slo.ttft_attainment)}, TBT ${pct(s.slo.tbt_attainment)})`],
    ['throughput', `${s.throughput.requests_per_s.toFixed(2)} req/s, ${s.throughput.output_tokens_per_s.toFixed(0)} output tokens/s`],
    ['makespan / GPU busy', `${s.makespan_s.toFixed(1)} s / ${pct(s.gpu_busy_fraction)}`],
    ['bytes moved over links', formatBytes(s.bytes_total)],
  ];
  return { columns: ['metric', 'value'], rows };
}

export function tiersTable(s: ServeSummary): { columns: string[]; rows: (string | number)[][] } {
  return {
    columns: ['tier', 'capacity (tokens)', 'peak (tokens)', 'promoted to HBM (blocks)', 'demoted (blocks)'],
    rows: s.tiers.map((t) => [t.name, t.capacity_tokens ?? 'unbounded', t.peak_tokens, t.promoted_blocks, t.demoted_blocks]),
  };
}

/** The overload verdict of the run as text (serving/overload.ts states the rule), or '' when it was not overloaded. */
export function overloadMarkdown(s: ServeSummary): string {
  const v = s.overload;
  if (!v?.overloaded) return '';
  const out = [`This run is overloaded: ${v.reasons.join('; ')}.`];
  if (v.offered_tokens_per_s !== null && v.capacity_tokens_per_s !== null && v.load !== null) {
    const n = (x: number) => Math.round(x).toLocaleString('en-US');
    out.push(
      `Offered **${n(v.offered_tokens_per_s)} tokens/s** (input + output of every request over the arrival span) against a capacity of ` +
        `**${n(v.capacity_tokens_per_s)} tokens/s** (served tokens per GPU-busy second): load **${v.load.toFixed(2)}**.`,
    );
  }
  out.push(v.advice.map((a) => `- ${a}`).join('\n'));
  return out.join('\n\n');
}

/** Render the charts into outDir/charts and write outDir/index.html; returns the page path. */
export async function writeServeRunReport(outDir: string, s: ServeSummary, records: readonly RequestRecord[], generatedBy?: string): Promise<string> {
  const rel = (p: string) => relative(outDir, p).split('\\').join('/');
  const sections: PageSection[] = [{ heading: 'Summary', table: headlineTable(s) }];
  const overload = overloadMarkdown(s);
  if (overload) sections.push({ heading: 'Overloaded: what to change', markdown: overload });
  const charts: [string, string, TopLevelSpec][] = [
    ['Prefix hits per tier', 'tier-hits', tierHitSpec(s)],
    ['Latency', 'latency-cdf', latencyCdfSpec(records)],
    ['Backpressure over time', 'arrivals', arrivalsSpec(records)],
  ];
  for (const [heading, name, spec] of charts) {
    const c = await renderChart(spec, join(outDir, 'charts', name));
    sections.push({ heading, chart: { svg: c.svg, specFile: rel(c.specPath), pngFile: rel(c.pngPath) } });
  }
  sections.push({ heading: 'Tiers', table: tiersTable(s), markdown: `Dropped from the last tier: ${s.dropped_blocks} blocks.` });
  return writeReportPage(outDir, {
    title: `kvtier serve: ${s.trace.split('/').pop()}`,
    subtitle: `model \`${s.model}\`, hardware \`${s.hardware}\`, cache policy \`${s.cache_policy}\``,
    generatedBy: generatedBy ?? 'Generated by kvtier serve.',
    sections,
  });
}
