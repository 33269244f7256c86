/**
 * The `kvtier hil compare` report: per policy, predicted (simulator, calibrated profile) vs
 * measured (HIL) per-step latency, stall and bytes, and the distribution of the per-step latency
 * error, from <dir>/compare.json. Charts under <dir>/charts/, the page at <dir>/index.html.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TopLevelSpec } from 'vega-lite';
import { type CompareResult, pooledErrors } from '../hil/compare/compare.js';
import { quantile } from '../hil/compare/errors.js';
import { renderChart } from './render-chart.js';
import { type PageSection, writeReportPage } from './report-page.js';

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

export async function renderCompareReport(dir: string): Promise<string> {
  const r = JSON.parse(readFileSync(join(dir, 'compare.json'), 'utf8')) as CompareResult;
  mkdirSync(join(dir, 'charts'), { recursive: true });
  const long: Record<string, unknown>[] = [];
  const errs: Record<string, unknown>[] = [];
  for (const p of r.policies) {
    for (const s of p.steps) {
      for (const [source, lat, stall, bytes] of [
        ['simulated', s.sim_latency_ms, s.sim_stall_ms, s.sim_bytes],
        ['measured', s.hil_latency_ms, s.hil_stall_ms, s.hil_bytes],
      ] as const) {
        long.push({ policy: p.label, step: s.step, source, latency_ms: lat, stall_ms: stall, MiB: bytes / 2 ** 20 });
      }
      if (s.step >= r.skip_steps) errs.push({ policy: p.label, step: s.step, error_pct: s.latency_rel_error * 100 });
    }
  }
  const perStep = (field: string, title: string): TopLevelSpec => ({
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    data: { values: long },
    facet: { row: { field: 'policy', type: 'nominal', title: null } },
    spec: {
      width: 560,
      height: 130,
      mark: { type: 'line', strokeWidth: 1.5 },
      encoding: {
        x: { field: 'step', type: 'quantitative', title: 'decode step' },
        y: { field, type: 'quantitative', title, scale: { zero: false } },
        color: { field: 'source', type: 'nominal', title: null },
        strokeDash: { field: 'source', type: 'nominal', title: null },
      },
    },
    resolve: { scale: { y: 'independent' } },
  }) as TopLevelSpec;
  const errSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    data: { values: errs },
    width: 560,
    height: 40 * Math.max(1, r.policies.length),
    mark: { type: 'boxplot', extent: 'min-max' },
    encoding: {
      y: { field: 'policy', type: 'nominal', title: null },
      x: { field: 'error_pct', type: 'quantitative', title: '|simulated - measured| / measured, per step (%)' },
    },
  } as TopLevelSpec;
  const charts: [string, TopLevelSpec, string][] = [
    ['latency', perStep('latency_ms', 'latency (ms)'), 'Per-step latency: simulated with the calibrated profile vs measured on the backend'],
    ['stall', perStep('stall_ms', 'stall (ms)'), 'Per-step stall (compute waiting on memory or on the host)'],
    ['bytes', perStep('MiB', 'bytes moved (MiB)'), 'Per-step bytes moved over all links'],
    ['error', errSpec, `Distribution of the per-step latency error (first ${r.skip_steps} step(s) left out)`],
  ];
  const sections: PageSection[] = [];
  const { all, eachRun } = pooledErrors(r);
  const met = quantile(all, 0.5) <= r.targets.median && quantile(all, 0.95) <= r.targets.p95;
  const repeat = r.repeat ?? 1;
  const repeatText =
    repeat > 1
      ? ` Measured = per-step median of **${repeat} HIL runs** per policy; against each run alone the error is median ${pct(quantile(eachRun, 0.5))}, p95 ${pct(quantile(eachRun, 0.95))}. ` +
        `"runs differ" is the hardware's own repeatability: per step, (max − min) / median of the runs' latencies.`
      : '';
  sections.push({
    heading: 'Summary',
    markdown:
      `Trace \`${r.trace}\`, HBM budget ${r.hbm_budget}, simulator profile \`${r.hardware}\`, hardware: **${r.device}** (${r.backend} backend). ` +
      `Per-step latency error over all policies: median **${pct(quantile(all, 0.5))}**, p95 **${pct(quantile(all, 0.95))}** ` +
      `(targets ≤ ${pct(r.targets.median)} / ≤ ${pct(r.targets.p95)}: ${met ? 'met' : 'not met'}).` +
      repeatText,
    table: {
      columns: [
        'policy',
        'median |err|',
        'p95 |err|',
        ...(repeat > 1 ? ['each run: median / p95 |err|', 'runs differ: median / p95'] : []),
        'TBT p50 sim (ms)',
        repeat > 1 ? 'TBT p50 measured, run 1 (ms)' : 'TBT p50 measured (ms)',
        'stall sim (ms)',
        repeat > 1 ? 'stall measured, run 1 (ms)' : 'stall measured (ms)',
        'bytes sim (MiB)',
        'bytes measured (MiB)',
      ],
      rows: r.policies.map((p) => [
        p.label,
        pct(p.latency_error.median),
        pct(p.latency_error.p95),
        ...(repeat > 1 ? [p.per_run_error ? `${pct(p.per_run_error.median)} / ${pct(p.per_run_error.p95)}` : '', p.repeat_spread ? `${pct(p.repeat_spread.median)} / ${pct(p.repeat_spread.p95)}` : ''] : []),
        p.sim.tbt_ms.p50.toFixed(3),
        p.hil.tbt_ms.p50.toFixed(3),
        p.sim.stall_ms.toFixed(2),
        p.hil.stall_ms.toFixed(2),
        (p.sim.bytes_total / 2 ** 20).toFixed(1),
        (p.hil.bytes_total / 2 ** 20).toFixed(1),
      ]),
    },
  });
  const notes = r.policies.flatMap((p) => (p.notes ?? []).map((n) => `${p.label}: ${n}`));
  if (notes.length) sections.push({ heading: 'Notes', markdown: notes.map((n) => `- ${n}`).join('\n') });
  const warnings = [...new Set(r.policies.flatMap((p) => p.warnings.map((w) => `${p.label}: ${w}`)))];
  if (warnings.length) sections.push({ heading: 'Warnings', markdown: warnings.map((w) => `- ${w}`).join('\n') });
  for (const [name, spec, caption] of charts) {
    const c = await renderChart(spec, join(dir, 'charts', name));
    sections.push({ heading: caption.split(':')[0], chart: { svg: c.svg, specFile: `charts/${name}.vl.json`, pngFile: `charts/${name}.png`, caption } });
  }
  sections.push({
    heading: 'How it was measured',
    markdown:
      'Simulated: `kvtier run` with the profile written by `kvtier hil calibrate`. Measured: `kvtier hil run` — the same policy code and decisions, real KV bytes in an HBM arena, ' +
      'a pinned host pool and an O_DIRECT file, real copies, quantization, paged attention and GEMV kernels, timed with events. ' +
      'Stall = step latency − kernel time on the compute stream (see hil.json in each hil-* run directory).',
  });
  return writeReportPage(dir, { title: 'kvtier: simulator vs hardware', subtitle: `${r.policies.length} policies, ${r.device}`, sections });
}
