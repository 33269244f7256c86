/**
 * The report page of a serving sweep: prefix hit ratio, TTFT and backpressure vs cache capacity per
 * cache policy, and a table of every configuration.
 */
import { join } from 'node:path';
import type { TopLevelSpec } from 'vega-lite';
import type { ServeSweepRow } from '../studies/serve-sweep.js';
import type { ServeSweepSpec } from '../studies/serve-sweep-spec.js';
import { renderChart } from './render-chart.js';
import { writeReportPage, type PageSection } from './report-page.js';

function lineChart(title: string, subtitle: string, values: object[], y: string, yTitle: string, extra: object[] = []): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title, subtitle, anchor: 'start' },
    width: 420,
    height: 260,
    data: { values },
    facet: { column: { field: 'trace', type: 'nominal', title: null } },
    spec: {
      layer: [
        {
          mark: { type: 'line', point: true },
          encoding: {
            x: { field: 'capacity', type: 'quantitative', scale: { type: 'log' }, title: 'prefix-cache capacity (tokens)' },
            y: { field: y, type: 'quantitative', title: yTitle },
            color: { field: 'cache_policy', type: 'nominal', title: 'policy' },
          },
        },
        ...extra,
      ],
    },
    resolve: { scale: { y: 'independent' } },
    config: { font: 'sans-serif' },
  } as TopLevelSpec;
}

export async function writeServeSweepReport(dir: string, spec: ServeSweepSpec, rows: ServeSweepRow[], generatedBy: string): Promise<string> {
  const ok = rows.filter((r) => r.status === 'ok' && r.capacity !== null);
  const sections: PageSection[] = [];
  const charts: [string, string, TopLevelSpec][] = [
    [
      'hit-ratio',
      'Prefix hit ratio',
      lineChart('Prefix hit ratio vs cache capacity', 'dashed: the trace\'s maximum (unbounded cache)', ok, 'prefix_hit_ratio', 'prefix-matched / input tokens', [
        { mark: { type: 'rule', strokeDash: [4, 4], color: 'black' }, encoding: { y: { aggregate: 'max', field: 'theoretical_prefix_hit_ratio' } } },
      ]),
    ],
    ['ttft', 'Time to first token', lineChart('TTFT p99 vs cache capacity', 'lower is better', ok, 'ttft_p99_ms', 'TTFT p99 (ms)')],
    ['backpressure', 'Backpressure', lineChart('Refused requests (backpressure) vs cache capacity', 'requests refused by admission control', ok, 'backpressure_events', 'refused requests')],
  ];
  if (ok.length > 0) {
    for (const [name, heading, s] of charts) {
      const r = await renderChart(s, join(dir, 'charts', name));
      sections.push({ heading, chart: { svg: r.svg, specFile: `charts/${name}.vl.json`, pngFile: `charts/${name}.png` } });
    }
  }
  const cols = ['id', 'status', 'cache_policy', 'capacity', 'prefix_hit_ratio', 'ttft_p99_ms', 'tbt_p99_ms', 'backpressure_events', 'slo_attainment', 'error'];
  sections.push({ heading: 'All configurations', table: { columns: cols, rows: rows.map((r) => cols.map((c) => (r[c] as string | number | null) ?? null)) } });
  return writeReportPage(dir, { title: spec.name, subtitle: 'kvtier serving sweep', generatedBy, sections });
}
