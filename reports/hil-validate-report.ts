/**
 * The `kvtier hil validate` report from <dir>/validate.json: what backs every tier, the calibration
 * points (held out from the grid), the pooled errors (policies that move data apart from those that
 * move none) with the hardware's run-to-run spread beside them, per policy, pass/miss per cell
 * against the targets, and charts (error and spread per cell and policy, pass/miss grid, simulated
 * against measured mean step time). Charts under <dir>/charts/, the page at <dir>/index.html.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TopLevelSpec } from 'vega-lite';
import { contextLabel } from '../hil/validate/grid.js';
import { hostWaitShare, medianP95, REPEATABLE_SPREAD } from '../hil/validate/stats.js';
import type { PoolSummary, ValidateResult } from '../hil/validate/validate.js';
import { renderChart } from './render-chart.js';
import { type PageSection, writeReportPage } from './report-page.js';

const pct = (x: number | undefined) => (x !== undefined && Number.isFinite(x) ? `${(x * 100).toFixed(2)}%` : '–');
const SCHEMA = 'https://vega.github.io/schema/vega-lite/v5.json';
/** a model as the grid names it: a preset name, or a model file shown by its name */
const short = (m: string) => m.replace(/^.*\//, '').replace(/(\.model)?\.json$/, '');

function poolRow(p: PoolSummary, extra: string[] = []): (string | number)[] {
  const r = p.error_repeatable;
  return [p.name, ...extra, p.cells, p.passed, pct(p.error.median), pct(p.error.p95), pct(p.error_each_run.median), pct(p.error_each_run.p95), pct(p.spread.median), pct(p.spread.p95), r ? `${pct(r.median)} / ${pct(r.p95)} (${r.n} of ${p.error.n})` : '–'];
}
const POOL_COLS = ['cells', 'pass', 'median |err|', 'p95 |err|', 'each run: median', 'each run: p95', 'runs differ: median', 'runs differ: p95', `repeated steps (runs within ${pct(REPEATABLE_SPREAD)}): median / p95 |err|`];

/** when and by which build the run was made (each call of a resumed run), and the build that re-simulated it */
export function runBy(r: Pick<ValidateResult, 'calls' | 'resimulated_with'>): string {
  const calls = r.calls ?? [];
  const by = (k: { version: string; commit: string }) => `kvtier ${k.version} (${k.commit})`;
  const ran = calls.length ? `, run ${calls.map((c) => `${c.started_at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')} by ${by(c.kvtier)}`).join(', then ')}` : '';
  return `${ran}${r.resimulated_with ? `, simulator side again by ${by(r.resimulated_with)}` : ''}`;
}

/** a host's issue pace that differs this much (the larger over the smaller) between a cell's runs counts as a change of pace */
export const HOST_PACE_CHANGE = 1.3;

/**
 * What the host issue probes taken right before each run say (us per copy issued): their range over all
 * runs, and the cells whose runs met host paces HOST_PACE_CHANGE or more apart. A step that waits on the
 * host follows its pace, so such a cell's runs may differ for that reason alone. Empty when no cell has probes.
 */
export function hostProbeSummary(cells: readonly Pick<ValidateResult['cells'][number], 'hw_host_probe_us'>[]): string {
  const probed = cells.filter((c) => c.hw_host_probe_us && c.hw_host_probe_us.length > 0).map((c) => c.hw_host_probe_us!);
  if (probed.length === 0) return '';
  const all = probed.flat();
  const changed = probed.filter((xs) => Math.max(...xs) >= HOST_PACE_CHANGE * Math.min(...xs)).length;
  return `The host's issue pace, probed right before each run: ${Math.min(...all).toFixed(2)}-${Math.max(...all).toFixed(2)} us per copy over ${all.length} runs; in ${changed} of ${probed.length} cells the runs met paces ${HOST_PACE_CHANGE}x or more apart (a step that waits on the host follows that pace).`;
}

export async function renderValidateReport(dir: string): Promise<string> {
  const r = JSON.parse(readFileSync(join(dir, 'validate.json'), 'utf8')) as ValidateResult;
  mkdirSync(join(dir, 'charts'), { recursive: true });
  const ok = r.cells.filter((c) => c.status === 'ok');
  const where = (c: (typeof r.cells)[number]) => `${c.trace}${c.trace_kind === 'captured' ? ` (${c.model || 'own model'})` : ''} · ${c.budget}`;
  const errRows = ok.flatMap((c) => [
    { policy: c.label, cell: where(c), what: 'median |error|', pct: c.error!.median * 100 },
    { policy: c.label, cell: where(c), what: 'p95 |error|', pct: c.error!.p95 * 100 },
    { policy: c.label, cell: where(c), what: 'runs differ (p95)', pct: c.spread!.p95 * 100 },
  ]);
  const policies = [...new Set(r.cells.map((c) => c.label))];
  const errSpec = {
    $schema: SCHEMA,
    data: { values: errRows },
    width: 620,
    height: 26 * Math.max(1, policies.length),
    mark: { type: 'point', filled: true, size: 36, opacity: 0.7 },
    encoding: {
      y: { field: 'policy', type: 'nominal', title: null, sort: policies },
      yOffset: { field: 'what', type: 'nominal' },
      x: { field: 'pct', type: 'quantitative', title: 'per cell: |simulated − measured| / measured, and the runs\' own spread (%)', scale: { type: 'symlog', constant: 1 } },
      color: { field: 'what', type: 'nominal', title: null },
      tooltip: [{ field: 'policy' }, { field: 'cell' }, { field: 'what' }, { field: 'pct', format: '.2f' }],
    },
  } as unknown as TopLevelSpec;
  const gridRows = r.cells.map((c) => ({
    policy: c.label,
    column: `${contextLabel(c.context)} · ${c.budget}`,
    trace: `${c.trace_name} · ${c.model ? short(c.model) : 'own model'}`,
    verdict: c.status === 'ok' ? (c.judgement!.pass ? 'pass' : 'miss') : c.status,
  }));
  const passSpec = {
    $schema: SCHEMA,
    data: { values: gridRows },
    facet: { row: { field: 'trace', type: 'nominal', title: null, header: { labelAngle: 0, labelAlign: 'left', labelOrient: 'top' } } },
    spec: {
      width: { step: 22 },
      height: { step: 14 },
      mark: { type: 'rect', stroke: 'white' },
      encoding: {
        x: { field: 'column', type: 'ordinal', title: 'context · budget', sort: null },
        y: { field: 'policy', type: 'nominal', title: null, sort: policies },
        color: { field: 'verdict', type: 'nominal', title: null, scale: { domain: ['pass', 'miss', 'skipped', 'error', 'not-run'], range: ['#4c9a2a', '#d1495b', '#bbbbbb', '#333333', '#eeeeee'] } },
        tooltip: [{ field: 'trace' }, { field: 'policy' }, { field: 'column' }, { field: 'verdict' }],
      },
    },
  } as unknown as TopLevelSpec;
  const meanRows = ok.map((c) => ({ policy: c.label, pool: c.pool, cell: where(c), simulated: c.sim_dist!.mean, measured: c.hw_dist!.mean }));
  const hi = Math.max(1e-3, ...meanRows.flatMap((x) => [x.simulated, x.measured]));
  const lo = Math.max(1e-4, Math.min(hi, ...meanRows.flatMap((x) => [x.simulated, x.measured])));
  const meanSpec = {
    $schema: SCHEMA,
    width: 420,
    height: 420,
    layer: [
      { data: { values: [{ x: lo, y: lo }, { x: hi, y: hi }] }, mark: { type: 'line', color: '#999', strokeDash: [4, 3] }, encoding: { x: { field: 'x', type: 'quantitative', scale: { type: 'log' } }, y: { field: 'y', type: 'quantitative', scale: { type: 'log' } } } },
      {
        data: { values: meanRows },
        mark: { type: 'point', filled: true, size: 40, opacity: 0.75 },
        encoding: {
          x: { field: 'measured', type: 'quantitative', title: 'measured mean step time (ms)', scale: { type: 'log' } },
          y: { field: 'simulated', type: 'quantitative', title: 'simulated mean step time (ms)', scale: { type: 'log' } },
          color: { field: 'pool', type: 'nominal', title: null },
          tooltip: [{ field: 'policy' }, { field: 'cell' }, { field: 'simulated', format: '.4f' }, { field: 'measured', format: '.4f' }],
        },
      },
    ],
  } as unknown as TopLevelSpec;
  const t = r.targets;
  const passed = ok.filter((c) => c.judgement!.pass).length;
  const hostProbes = hostProbeSummary(r.cells);
  const sections: PageSection[] = [];
  sections.push({
    heading: 'Summary',
    markdown:
      `Grid \`${r.grid.name}\` on **${r.device}** (${r.backend} backend)${runBy(r)}: ${r.cells.length} cells, ${ok.length} run (${r.runs} HIL runs each, first ${r.skip_steps} step(s) left out), ` +
      `${r.cells.filter((c) => c.status === 'skipped').length} skipped, ${r.cells.filter((c) => c.status === 'error').length} failed, ${r.cells.filter((c) => c.status === 'not-run').length} not run. ` +
      `**${passed} of ${ok.length}** cells meet their targets. Error = per step |simulated − measured| / measured, measured = the per-step median of the runs; ` +
      `"each run" = against every run alone; "runs differ" = the hardware's own spread, per step and pair of runs |run i − run j| / their mean; ` +
      `"repeated steps" = the error over the steps whose runs all lie within ${pct(REPEATABLE_SPREAD)} of each other (where the hardware agrees with itself; shown beside the strict error, and the cells are judged on every step).\n\n` +
      `Targets: policies that move data (any bytes on a link) median ≤ ${pct(t.moving.median)}, p95 ≤ ${pct(t.moving.p95)}; policies that move none ≤ ${pct(t.non_moving.median)} / ${pct(t.non_moving.p95)}; ` +
      `policies that use the storage tier: mean step time within ${pct(t.storage.mean)} and simulated p50 and p99 step times within the runs' spread (p95) of the measured.` +
      (hostProbes ? `\n\n${hostProbes}` : ''),
    table: { columns: ['pool', ...POOL_COLS], rows: r.pools.map((p) => poolRow(p)) },
  });
  sections.push({ heading: 'Per policy', table: { columns: ['policy', 'pool', ...POOL_COLS], rows: r.per_policy.map((p) => poolRow(p, [p.pool])), interactive: true } });
  sections.push({ heading: 'Tiers and what backs them', table: { columns: ['tier', 'kind', 'device'], rows: r.tiers.map((x) => [x.tier, x.kind, x.device]) } });
  sections.push({
    heading: 'Calibration',
    markdown:
      `The grid is judged at contexts ${r.held_out_contexts.join(', ')} (tokens). ` +
      r.profiles
        .map((p) => `\`${short(p.model)}\`: \`${p.file}\` — ${p.note}${p.points ? `; attention kernels at ${p.points.attention_contexts.join(', ')}, layer chains at ${p.points.situ_contexts.join(', ')}, layout copies and file batches at ${p.points.layout_context}, overlap at ${p.points.overlap_context}` : ''}${p.points_near_grid && p.points_near_grid.length ? `; **points at grid contexts: ${p.points_near_grid.join(', ')}**` : ''}${p.copies_retimed ? `; copy batches timed twice, the lesser kept (from the second: ${p.copies_retimed.idle} idle${p.copies_retimed.gemv ? `, ${p.copies_retimed.gemv} beside the GEMV` : ''}; H2D alpha ${p.copies_retimed.h2d_alpha_us[0]} -> ${p.copies_retimed.h2d_alpha_us[1]} us)` : ''}.`)
        .join(' '),
  });
  if (r.notes.length) sections.push({ heading: 'Notes', markdown: r.notes.map((n) => `- ${n}`).join('\n') });
  const filed = ok.filter((c) => c.hw_file);
  if (filed.length) {
    // per run: the median over its steps (the first skip_steps left out) of the step and of its file-tier times
    const skip = r.grid.skip_steps;
    const med = (xs: readonly number[]) => (xs.length > skip ? medianP95(xs.slice(skip)).median : Number.NaN);
    const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '');
    const device = r.tiers.find((t) => t.kind === 'nvme')?.device ?? '';
    sections.push({
      heading: 'Storage tier, per run',
      markdown: `The file tier's time as the host saw it in each run of the cells that used it (${device}): read batches on the tier's threads, the host's wall time at its joins of those batches (where the runs kept it), writes, and the memory-stream synchronizations before file requests into bounce slots a copy had used. Medians over the steps (the first ${skip} left out).`,
      table: {
        columns: ['cell', 'run', 'step (ms)', 'file reads (ms)', 'read joins (ms)', 'file writes (ms)', 'syncs (ms)', 'syncs per step', 'storage bytes read per step (MiB)'],
        rows: filed.flatMap((c) =>
          c.hw_ms!.map((steps, k) => [
            c.id,
            k + 1,
            ms(med(steps)),
            ms(med(c.hw_file!.read_ms[k])),
            c.hw_file!.join_ms ? ms(med(c.hw_file!.join_ms[k])) : '',
            ms(med(c.hw_file!.write_ms[k])),
            ms(med(c.hw_file!.sync_ms[k])),
            med(c.hw_file!.syncs[k]),
            ((c.hw_bytes?.['nvme:nvme->dram'] ?? 0) / c.hw_ms![k].length / 2 ** 20).toFixed(1),
          ]),
        ),
      },
    });
  }
  const charts: [string, TopLevelSpec, string][] = [
    ['error-per-cell', errSpec, 'Error and spread per cell: median and p95 |error| of each cell beside the hardware\'s run-to-run spread (p95), per policy'],
    ['pass-miss', passSpec, 'Pass or miss per cell: each policy at each context and budget, per trace and model'],
    ['mean-step', meanSpec, 'Mean step time: simulated against measured per cell (the dashed line is equality)'],
  ];
  for (const [name, spec, caption] of charts.filter(([name]) => ok.length > 0 || name === 'pass-miss')) {
    const c = await renderChart(spec, join(dir, 'charts', name));
    sections.push({ heading: caption.split(':')[0], chart: { svg: c.svg, specFile: `charts/${name}.vl.json`, pngFile: `charts/${name}.png`, caption } });
  }
  sections.push({
    heading: 'Cells',
    table: {
      columns: ['cell', 'trace', 'prompt', 'model', 'policy', 'budget', 'status', 'pool', 'median |err|', 'p95 |err|', 'runs differ p95', 'waits on host', 'host probe per run (us per copy)', 'mean sim / hw (ms)', 'p50 sim / hw (ms)', 'p99 sim / hw (ms)', 'verdict'],
      rows: r.cells.map((c) => [
        c.id,
        c.trace,
        c.prompt_tokens,
        c.model ? short(c.model) : '(trace)',
        c.label,
        c.budget,
        c.status === 'ok' ? 'ok' : `${c.status}${c.reason ? `: ${c.reason}` : ''}`,
        c.pool ?? '',
        pct(c.error?.median),
        pct(c.error?.p95),
        pct(c.spread?.p95),
        pct(hostWaitShare(c, r.grid.skip_steps)),
        c.hw_host_probe_us ? c.hw_host_probe_us.map((x) => x.toFixed(2)).join(' / ') : '',
        c.sim_dist ? `${c.sim_dist.mean.toFixed(3)} / ${c.hw_dist!.mean.toFixed(3)}` : '',
        c.sim_dist ? `${c.sim_dist.p50.toFixed(3)} / ${c.hw_dist!.p50.toFixed(3)}` : '',
        c.sim_dist ? `${c.sim_dist.p99.toFixed(3)} / ${c.hw_dist!.p99.toFixed(3)}` : '',
        c.judgement ? `${c.judgement.pass ? 'pass' : 'miss'} (${c.judgement.checks.map((k) => `${k.name} ${pct(k.value)} ${k.pass ? '≤' : '>'} ${pct(k.limit)}`).join('; ')})` : '',
      ]),
      interactive: true,
    },
  });
  return writeReportPage(dir, { title: 'kvtier: simulator vs hardware on a held-out grid', subtitle: `${r.grid.name}, ${r.device}`, sections });
}
