import { describe, expect, it } from 'vitest';
import { compile, type TopLevelSpec } from 'vega-lite';
import { compileToVega } from '../../reports/render-chart.js';
import { ORACLE_LABEL } from '../../reports/chart-series.js';
import { stallTimelineSpec, MAX_TIMELINE_POINTS } from '../../reports/chart-stall-timeline.js';
import { sweepChartData } from '../../reports/sweep-chart-data.js';
import { sweepCharts, type NamedChart } from '../../reports/sweep-charts.js';
import type { SweepRow } from '../../sim/metrics/summary.js';
import { expectGolden } from './golden.js';
import { stepsFor, sweepRows } from './fixtures.js';

/** Compile with a logger that collects every warning Vega-Lite would print. */
function compileWarnings(spec: TopLevelSpec): string[] {
  const seen: string[] = [];
  const push = (...a: unknown[]) => {
    seen.push(a.map(String).join(' '));
    return logger;
  };
  const logger = { level: () => 0, error: push, warn: push, info: () => logger, debug: () => logger } as never;
  compile(spec, { logger });
  return seen;
}

function byName(charts: NamedChart[], name: string): NamedChart {
  const c = charts.find((x) => x.name === name);
  if (!c) throw new Error(`no chart ${name} in ${charts.map((x) => x.name).join(', ')}`);
  return c;
}

function valuesOf(spec: TopLevelSpec): Record<string, unknown>[] {
  return (spec as { data: { values: Record<string, unknown>[] } }).data.values;
}

describe('sweep chart specs (golden)', () => {
  const charts = sweepCharts(sweepRows({ failed: true }), { steps: stepsFor });

  it('builds the six charts in page order', () => {
    expect(charts.map((c) => c.name)).toEqual([
      'pareto',
      'tbt-vs-budget',
      'recall-vs-budget',
      'bytes-moved',
      'stall-timeline',
      'masking-vs-budget',
    ]);
  });

  for (const name of ['pareto', 'tbt-vs-budget', 'recall-vs-budget', 'bytes-moved', 'stall-timeline', 'masking-vs-budget']) {
    it(`${name} matches its golden spec and compiles without warnings`, () => {
      const c = charts.find((x) => x.name === name)!;
      expectGolden(`${name}.vl.json`, c.spec);
      expect(compileWarnings(c.spec)).toEqual([]);
    });
  }

  it('without an oracle row: matches golden, and no bound anywhere', () => {
    const noOracle = sweepCharts(sweepRows({ oracle: false }), { steps: stepsFor });
    expectGolden('tbt-vs-budget.no-oracle.vl.json', byName(noOracle, 'tbt-vs-budget').spec);
    for (const c of noOracle) {
      expect(JSON.stringify(c.spec)).not.toContain(ORACLE_LABEL);
      expect(JSON.stringify(compileToVega(c.spec))).not.toContain(ORACLE_LABEL);
    }
  });

  it('stacks a row per hardware profile when a sweep covers two (golden), each with its own value axis', () => {
    const rows: SweepRow[] = [
      ...sweepRows(),
      ...sweepRows().map((r) => ({ ...r, hardware: 'h200-nvl', tbt_p50_ms: r.tbt_p50_ms * 40, tbt_p99_ms: r.tbt_p99_ms * 40 })),
    ];
    const spec = byName(sweepCharts(rows), 'tbt-vs-budget').spec as Record<string, any>;
    expectGolden('tbt-vs-budget.two-hardware.vl.json', spec);
    expect(spec['vconcat'].map((k: any) => k.title.text)).toEqual([['h100-pcie5'], ['h200-nvl']]);
    // each row its own value axis: h200 is 40x slower, so its domain is 40x h100's
    const yDomain = (k: any) => k.spec.layer.find((l: any) => l.encoding.y?.field === 'value').encoding.y.scale.domain;
    const [h100, h200] = spec['vconcat'].map(yDomain);
    expect(h200[1] / h100[1]).toBeCloseTo(40, 9);
    expect(compileWarnings(spec as TopLevelSpec)).toEqual([]);
  });
});

describe('oracle bound', () => {
  it('is in every compiled chart when an oracle row exists: black, named "oracle (bound)", dashed where it is a line', () => {
    for (const c of sweepCharts(sweepRows(), { steps: stepsFor })) {
      const vega = JSON.stringify(compileToVega(c.spec));
      expect(vega, c.name).toContain(ORACLE_LABEL);
      if (c.name !== 'pareto') expect(vega, c.name).toContain('[6,4]');
      expect(vega, c.name).toContain('#000000');
    }
  });

  it('follows the `oracle` option: another policy name becomes the bound', () => {
    const rows = sweepRows().map((r) => (r.policy === 'oracle' ? { ...r, policy: 'belady' } : r));
    const tbt = byName(sweepCharts(rows, { oracle: 'belady' }), 'tbt-vs-budget');
    const points = (spec: TopLevelSpec) => valuesOf(spec).filter((v) => v['kind'] === 'point');
    const series = new Set(points(tbt.spec).map((v) => v['series']));
    expect(series).toEqual(new Set(['h2o', 'quest', 'streaming', ORACLE_LABEL]));
    expect([...new Set(points(byName(sweepCharts(rows), 'tbt-vs-budget').spec).map((v) => v['series']))]).toContain('belady');
  });
});

describe('chart data', () => {
  it('leaves failed configurations out of every chart', () => {
    for (const c of sweepCharts(sweepRows({ failed: true }), { steps: stepsFor })) {
      expect(JSON.stringify(c.spec), c.name).not.toContain('snapkv');
    }
  });

  it('averages seeds, keeping the lowest recall_min', () => {
    const rows = [...sweepRows(), ...sweepRows().map((r) => ({ ...r, seed: 2, tbt_p50_ms: r.tbt_p50_ms + 2, recall_min: 0.1 }))];
    const data = sweepChartData(rows, 'oracle');
    const p = data.points.find((q) => q.policy === 'h2o' && q.budget === 0.1)!;
    const one = sweepRows().find((r) => r.policy === 'h2o' && r.hbm_budget_fraction === 0.1)!;
    expect(p.seeds).toBe(2);
    expect(p.tbt_p50_ms).toBeCloseTo(one.tbt_p50_ms + 1, 12);
    expect(p.recall_min).toBe(0.1);
    expect(data.averaged).toBe(true);
    expect(byName(sweepCharts(rows), 'tbt-vs-budget').spec.title).toEqual({ text: 'Time between tokens vs HBM budget', subtitle: 'lower is better; mean over seeds' });
  });

  it('stall timeline uses only the smallest budget and buckets long runs keeping the worst step', () => {
    const long = (r: SweepRow) =>
      Array.from({ length: 2500 }, (_, s) => ({ ...stepsFor(r)[0]!, step: s, stall_ms: s === 1234 ? 99 : 1 }));
    const spec = stallTimelineSpec(sweepChartData(sweepRows(), 'oracle'), long)!;
    const values = valuesOf(spec);
    const h2o = values.filter((v) => v['series'] === 'h2o');
    expect(h2o.length).toBe(Math.ceil(2500 / 3));
    expect(h2o.length).toBeLessThanOrEqual(MAX_TIMELINE_POINTS);
    expect(h2o.find((v) => v['step'] === 1233)!['stall_ms']).toBe(99);
    expect(JSON.stringify(spec.title)).toContain('HBM budget 10%');
  });

  it('stall timeline is absent when no run has step rows', () => {
    expect(stallTimelineSpec(sweepChartData(sweepRows(), 'oracle'), () => undefined)).toBeUndefined();
    expect(sweepCharts(sweepRows(), { steps: () => [] }).map((c) => c.name)).not.toContain('stall-timeline');
  });

  it('no successful configuration: no charts', () => {
    expect(sweepCharts(sweepRows({ failed: true }).filter((r) => r.status === 'failed'))).toEqual([]);
  });
});
