/**
 * Captured vs generated attention statistics, side by side: the reference traces captured from
 * the small Brown-trained GPT (traces/captured/), the generator's fitted preset (captured-brown)
 * and its default preset at the same shape, per layer, as Vega-Lite charts and tables, with the
 * residuals and the published statistics stated next to them. Writes the page and stats.csv (one
 * row per source, layer and statistic).
 *
 *   npx tsx notebooks/capture-report.ts [--out reports/capture] [--steps 128] [--seed 1]
 *
 * --steps is the number of decode steps generated for each preset (the captured traces are read
 * whole); --steps 16 is the short setting.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import type { TopLevelSpec } from 'vega-lite';
import { VEGA_LITE_SCHEMA } from '../reports/chart-frame.js';
import { renderChart } from '../reports/render-chart.js';
import { writeReportPage, type PageSection } from '../reports/report-page.js';
import { readTraceHeader } from '../traces/trace-reader.js';
import { computeTraceStats } from '../traces/trace-stats.js';
import { generatedStats } from '../traces/fit/fit-generator.js';
import { FIT_STATS, layerMeans, residual, statTable, type StatTable } from '../traces/fit/stat-targets.js';
import { intFlag, isMain, notebookFlags, runAsScript } from './notebook-args.js';

const NAME = 'notebooks/capture-report.ts';

export interface StatRow {
  source: string;
  layer: number;
  stat: string;
  value: number;
}

export interface CaptureReport {
  rows: StatRow[];
  page: string;
}

export async function captureReport(args: string[]): Promise<CaptureReport> {
  const flags = notebookFlags(NAME, args, { out: 'reports/capture', steps: '128', seed: '1' });
  const out = flags.out;
  const steps = intFlag(NAME, 'steps', flags.steps, 2);
  const seed = intFlag(NAME, 'seed', flags.seed, 0);
  const root = join(import.meta.dirname, '..');
  const fitted = JSON.parse(fs.readFileSync(join(root, 'traces/fit/fitted.json'), 'utf8'));
  const captured = ['brown-long-8k', 'brown-multitopic-8k', 'brown-needle-8k-d50'];

  const sources: { name: string; table: StatTable }[] = captured.map((n) => ({
    name: `captured: ${n}`,
    table: statTable(computeTraceStats(join(root, 'traces/captured', `${n}.kvt`))),
  }));
  sources.push({ name: 'generated: captured-brown', table: generatedStats(fitted.shape, { preset: 'captured-brown' }, steps, seed) });
  sources.push({ name: 'generated: default', table: generatedStats(fitted.shape, { preset: 'default' }, steps, seed) });

  const rows: StatRow[] = sources.flatMap((s) => s.table.flatMap((layer, l) => FIT_STATS.map((d, k) => ({ source: s.name, layer: l, stat: d.label, value: layer[k]! }))));
  const spec: TopLevelSpec = {
    $schema: VEGA_LITE_SCHEMA,
    data: { values: rows },
    facet: { field: 'stat', type: 'nominal', title: null, sort: FIT_STATS.map((d) => d.label) },
    columns: 5,
    resolve: { scale: { y: 'independent' } },
    spec: {
      width: 170,
      height: 120,
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'layer', type: 'ordinal', title: 'layer' },
        y: { field: 'value', type: 'quantitative', title: null },
        color: { field: 'source', type: 'nominal', title: null, legend: { orient: 'bottom', columns: 3, labelLimit: 320 } },
        strokeDash: { condition: { test: "indexof(datum.source, 'generated') === 0", value: [4, 3] }, value: [1, 0] },
      },
    },
  };

  const long = sources[0]!.table;
  const gen = sources[3]!.table;
  const fmt = (v: number) => (Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(3));
  const cm = layerMeans(long);
  const gm = layerMeans(gen);
  const dm = layerMeans(sources[4]!.table);
  const header = readTraceHeader(join(root, 'traces/captured/brown-long-8k.kvt')) as unknown as { capture_stats: Record<string, number[]> };
  const cs = header.capture_stats;
  const mean = (xs: number[]) => xs.reduce((s, v) => s + v, 0) / xs.length;

  const sections: PageSection[] = [
    {
      heading: 'What this compares',
      markdown:
        'Per layer, averaged over decode steps and the 2 KV-head groups: the three captured reference traces (8 layers, 8192-token prompt, ' +
        'block 16, topk 64; `traces/captured/PROVENANCE.md`), the generator with the fitted preset `captured-brown` and with its `default` ' +
        `preset at the same shape (${steps} steps, seed ${seed}). ` +
        'The fit is `traces/fit/fit-captured.ts` (coordinate search on the generator\'s ' +
        `parameters against brown-long-8k; loss ${fitted.presets['captured-brown'].start_loss} at the defaults, ${fitted.presets['captured-brown'].loss} fitted).`,
    },
    { heading: 'Captured vs generated, per layer', chart: { ...(await chartFiles()), caption: 'solid: captured; dashed: generated' } },
    {
      heading: 'Layer means and residuals (brown-long-8k vs captured-brown)',
      table: {
        columns: ['statistic', 'captured', 'generated (fitted)', 'generated (default)', 'worst layer residual (scales)'],
        rows: FIT_STATS.map((d, k) => {
          let worst = 0;
          let at = 0;
          long.forEach((row, l) => {
            const r = residual(d, gen[l]![k]!, row[k]!);
            if (Math.abs(r) > Math.abs(worst)) [worst, at] = [r, l];
          });
          return [d.label, fmt(cm[k]!), fmt(gm[k]!), fmt(dm[k]!), `${worst.toFixed(1)} (layer ${at})`];
        }),
      },
    },
    {
      heading: 'Residuals, stated plainly',
      markdown: [
        '- The generator\'s concentration rises monotonically with depth; the captured model has a **broad layer 1** (about 205 blocks for 90% of the mass, vs 5-31 elsewhere). The fit splits the difference, so the layer-mean blocks-for-50%/90% come out about half the captured ones and layer 1 is the worst residual.',
        '- The tail is heavier in the generator (blocks for 99% ~1.5x the captured), and the last-16-block mass is lower (0.82 vs 0.90): the captured recency decays more slowly past the window than exp(-d/13).',
        '- Persistence of the top-10% block set is matched on average (0.64 vs 0.60) only by a large heavy-hitter jitter (hh_jitter 1.73) and a low persistence parameter (0.46); the captured value varies by layer (0.53-0.72), the generated one less.',
        '- No sink: the captured model formed none (block-0 mass <= 0.0007), so the fitted sink_mass is 0.',
      ].join('\n'),
    },
    {
      heading: 'Against published statistics (token level, from the capture\'s own token-level counters)',
      table: {
        columns: ['property', 'published (large models)', 'captured (8-layer Brown GPT)', 'generator default / fitted'],
        rows: [
          ['attention sinks: first 4 tokens', 'a handful of initial tokens take an outsized share in most layers above the first two (StreamingLLM, Xiao et al. 2024)', `${mean(cs.sink4!).toExponential(1)} of the mass (max layer ${Math.max(...cs.sink4!).toExponential(1)}): none formed`, `${fmt(dm[0]!)} / ${fmt(gm[0]!)} on block 0`],
          ['sparsity: entries < 1% of row max', '> 95% (H2O)', `${(100 * mean(cs.tok_sparsity!)).toFixed(1)}% of tokens (layers ${(100 * Math.min(...cs.tok_sparsity!)).toFixed(1)}-${(100 * Math.max(...cs.tok_sparsity!)).toFixed(1)}%); ${(100 * cm[4]!).toFixed(1)}% of blocks`, `${(100 * dm[4]!).toFixed(1)}% / ${(100 * gm[4]!).toFixed(1)}% of blocks`],
          ['heavy hitters persist step to step', '> 95% persistence reported (Scissorhands); ~60% chunk overlap', `top-10% tokens kept: ${(100 * mean(cs.tok_persist!)).toFixed(0)}%; top-10% blocks: ${(100 * cm[5]!).toFixed(0)}%`, `${(100 * dm[5]!).toFixed(0)}% / ${(100 * gm[5]!).toFixed(0)}% of blocks`],
          ['broad low layers, sharp upper layers', 'yes', `blocks for 90%: ${long.map((r) => r[2]!.toFixed(0)).join(', ')}`, 'monotone by construction'],
          ['recent window', 'yes', `${(100 * cm[8]!).toFixed(0)}% of the mass on the last 4 blocks (64 tokens)`, `${(100 * dm[8]!).toFixed(0)}% / ${(100 * gm[8]!).toFixed(0)}%`],
        ],
      },
    },
  ];

  async function chartFiles() {
    fs.mkdirSync(out, { recursive: true });
    const r = await renderChart(spec, join(out, 'captured-vs-generated'));
    return { svg: r.svg, specFile: 'captured-vs-generated.vl.json', pngFile: 'captured-vs-generated.png' };
  }

  const page = writeReportPage(out, {
    title: 'Captured vs generated attention',
    subtitle: 'kvtier reference traces from a small Brown-trained GPT, and the generator calibrated against them',
    generatedBy: `\`${`npx tsx notebooks/capture-report.ts ${args.join(' ')}`.trim()}\``,
    sections,
  });
  fs.writeFileSync(join(out, 'stats.csv'), ['source,layer,stat,value', ...rows.map((r) => `${r.source},${r.layer},${r.stat},${r.value}`)].join('\n') + '\n');
  console.log(`wrote ${page}`);
  return { rows, page };
}

if (isMain(import.meta.url)) runAsScript(captureReport);
