/** The generated Vega-Lite specs: budget axes, the 100% reference, facets, line names, the Pareto front. */
import { describe, expect, it } from 'vitest';
import { compile, type TopLevelSpec } from 'vega-lite';
import { paretoFront } from '../../reports/pareto.js';
import { sweepCharts, type NamedChart } from '../../reports/sweep-charts.js';
import type { SweepRow } from '../../sim/metrics/summary.js';
import { row, stepsFor, sweepRows } from './fixtures.js';

type Spec = Record<string, any>;

/** The fixtures plus a `full` reference run at 100% and a second hardware profile. */
function rowsWithReference(): SweepRow[] {
  const full = row('full', 1, {
    tbt_p50_ms: 9, tbt_p99_ms: 9.5, tokens_per_s: 111, stall_ms: 0, transfer_ms: 0,
    masking_efficiency: 1, recall_mean: 1, recall_min: 1, h2d_MiB: 0, d2h_MiB: 0,
  });
  const one = [...sweepRows(), full];
  return [...one, ...one.map((r) => ({ ...r, id: `${r.id}/a100`, hardware: 'a100-pcie4', tbt_p50_ms: r.tbt_p50_ms * 1.5, tbt_p99_ms: r.tbt_p99_ms * 1.5 }))];
}

const charts = sweepCharts(rowsWithReference(), { steps: stepsFor });
const byName = (name: string): Spec => {
  const c = charts.find((x: NamedChart) => x.name === name);
  if (!c) throw new Error(`no chart ${name}`);
  return c.spec as Spec;
};
/** A chart's data rows, over all its stacked rows when it has several. */
const values = (spec: Spec): Record<string, any>[] => ((spec['vconcat'] ?? [spec]) as Spec[]).flatMap((k) => k['data'].values);
/** The layers of a chart (of its first row when it has several). */
const layers = (spec: Spec): Spec[] => {
  const k = spec['vconcat']?.[0] ?? spec;
  return k['spec']?.layer ?? k['layer'];
};

describe('budget axes', () => {
  for (const name of ['tbt-vs-budget', 'recall-vs-budget', 'masking-vs-budget']) {
    it(`${name}: ticks exactly at the budgets run, the 100% run as a rule, not a point`, () => {
      const spec = byName(name);
      for (const l of layers(spec).filter((x) => x.encoding?.x?.field === 'budget')) {
        expect(l.encoding.x.axis.values).toEqual([0.1, 0.25, 0.5]);
        // the domain ends well before 100%: the reference does not stretch the axis
        expect(l.encoding.x.scale.domain[1]).toBeLessThan(0.8);
      }
      const points = values(spec).filter((v) => v['kind'] === 'point');
      expect(new Set(points.map((v) => v['budget']))).toEqual(new Set([0.1, 0.25, 0.5]));
      expect(points.some((v) => v['series'] === 'full')).toBe(false);
      const refs = values(spec).filter((v) => v['kind'] === 'reference');
      expect(refs.length).toBeGreaterThan(0);
      expect(refs.every((v) => v['series'] === 'full · 100% HBM')).toBe(true);
      const rule = layers(spec).find((l) => l.mark.type === 'rule')!;
      expect(rule.transform).toEqual([{ filter: "datum.kind === 'reference'" }]);
      // across the data (from the axis start to the largest budget), not through the line names
      expect(rule.encoding.x2).toEqual({ field: 'budget_end' });
      for (const r of refs) {
        expect(r['budget']).toBe(rule.encoding.x.scale.domain[0]);
        expect(r['budget_end']).toBe(0.5);
      }
    });
  }

  it('stacks one row per trace / hardware, each with its own value axis', () => {
    const spec = byName('tbt-vs-budget');
    const kids: Spec[] = spec['vconcat'];
    expect(kids.map((k) => k['title'].text)).toEqual([['a100-pcie4'], ['h100-pcie5']]);
    const yDomain = (k: Spec) => k['spec'].layer.find((l: Spec) => l.encoding?.y?.field === 'value').encoding.y.scale.domain as [number, number];
    // a100 runs 1.5x slower: its axis is its own
    expect(yDomain(kids[0]!)[1]).toBeGreaterThan(yDomain(kids[1]!)[1]);
    for (const k of kids) expect(new Set(k['data'].values.map((v: Spec) => v['panel']))).toEqual(new Set([k['title'].text[0]]));
  });

  it('the reference rule sits at the reference run\'s value in its own panel', () => {
    const refs = values(byName('tbt-vs-budget')).filter((v) => v['kind'] === 'reference' && v['metric'] === 'TBT p50');
    expect(refs.map((v) => [v['panel'], v['value']]).sort()).toEqual([
      ['a100-pcie4', 13.5],
      ['h100-pcie5', 9],
    ]);
  });
});

describe('line names', () => {
  it('one name per line, at its largest budget, in the same panel and metric as its line', () => {
    const spec = byName('tbt-vs-budget');
    const points = values(spec).filter((v) => v['kind'] === 'point');
    const labels = values(spec).filter((v) => v['kind'] === 'label');
    const key = (v: Record<string, any>) => `${v['panel']}|${v['metric']}`;
    for (const k of new Set(points.map(key))) {
      const here = labels.filter((v) => key(v) === k);
      const series = new Set(points.filter((v) => key(v) === k).map((v) => v['series']));
      // every line and the reference are named exactly once
      expect(here.map((v) => v['text']).sort()).toEqual([...series, 'full · 100% HBM'].sort());
      for (const l of here) expect(l['budget']).toBe(0.5);
    }
  });

  it('names far enough apart sit exactly on their line\'s last point; close ones are moved apart by at least the gap', () => {
    // h2o and streaming only: at 50% their mean recalls (94%, 86.8%) are 18 px apart on a 190 px axis
    const two = sweepRows({ oracle: false }).filter((r) => r.policy === 'h2o' || r.policy === 'streaming');
    const spec = sweepCharts(two).find((c) => c.name === 'recall-vs-budget')!.spec as Spec;
    const label = (s: string) => values(spec).find((v) => v['kind'] === 'label' && v['metric'] === 'recall, mean' && v['text'] === s)!;
    expect(label('h2o')['value']).toBeCloseTo(0.94, 12);
    expect(label('streaming')['value']).toBeCloseTo(0.868, 12);
    // all four fixture lines: 0.985, 0.964, 0.94 lie within 12 px of each other and are spread
    const all = byName('recall-vs-budget');
    const y = layers(all).find((l) => l.encoding?.y?.field === 'value')!.encoding.y.scale.domain as [number, number];
    const px = (v: number) => ((y[1] - v) / (y[1] - y[0])) * 190;
    const here = values(all)
      .filter((v) => v['kind'] === 'label' && v['metric'] === 'recall, mean' && v['panel'] === 'h100-pcie5')
      .map((v) => px(v['value']))
      .sort((a, b) => a - b);
    for (let k = 1; k < here.length; k++) expect(here[k]! - here[k - 1]!).toBeGreaterThanOrEqual(12 - 1e-6);
  });
});

describe('facets', () => {
  it('no facet value without data: every column and row value has points', () => {
    const specs = charts.flatMap((c) => ((c.spec as Spec)['vconcat'] ?? [c.spec]) as Spec[]);
    expect(specs.filter((s) => s['facet']).length).toBeGreaterThan(5);
    for (const spec of specs) {
      const c = { name: JSON.stringify(spec['title']).slice(0, 60) };
      if (!spec['facet']) continue;
      for (const key of ['column', 'row'] as const) {
        const f = spec['facet'][key];
        if (!f) continue;
        const present = new Set(values(spec).filter((v) => v['kind'] === undefined || ['point', 'bar'].includes(v['kind'])).map((v) => v[f.field]));
        expect(new Set(f.sort), `${c.name} ${key}`).toEqual(present);
      }
    }
  });

  it('bytes moved: columns only for budgets below 100%, each listing only its own policies', () => {
    const spec = byName('bytes-moved');
    expect(spec['facet'].column.sort).toEqual(['10%', '25%', '50%']);
    expect(spec['resolve']).toEqual({ scale: { x: 'independent' } });
    expect(values(spec).some((v) => v['policy'] === 'full')).toBe(false);
    expect(spec['title'].subtitle).toContain('full · 100% HBM moves 0 B');
  });
});

describe('pareto chart', () => {
  const spec = byName('pareto');
  const kids: Spec[] = spec['vconcat'];
  const all = kids.flatMap(values);

  it('one row of budget panels per trace / hardware, each with its own time axis; the target and the reference drawn', () => {
    expect(kids.map((k) => k['title'].text)).toEqual([['a100-pcie4'], ['h100-pcie5']]);
    for (const k of kids) expect(k['facet'].column.sort).toEqual(['10%', '25%', '50%']);
    expect(kids[0]!['facet'].column.title).toBe('HBM budget');
    expect(kids[1]!['facet'].column.title).toBeNull();
    // a100 is 1.5x slower in the fixtures: its time axis starts and ends later
    const xDomain = (k: Spec) => layers(k).find((l) => l.encoding?.x)!.encoding.x.scale.domain as [number, number];
    expect(xDomain(kids[0]!)[0]).toBeGreaterThan(xDomain(kids[1]!)[0]);
    expect(all.filter((v) => v['kind'] === 'target').every((v) => v['recall'] === 0.99)).toBe(true);
    const refs = all.filter((v) => v['kind'] === 'reference' && v['panel'] === 'h100-pcie5');
    expect(refs.map((v) => v['tbt'])).toEqual([9, 9, 9]);
  });

  it('compiles without a Vega-Lite warning', () => {
    const seen: string[] = [];
    const push = (...a: unknown[]) => {
      seen.push(a.map(String).join(' '));
      return logger;
    };
    const logger = { level: () => 0, error: push, warn: push, info: () => logger, debug: () => logger } as never;
    compile(spec as TopLevelSpec, { logger });
    expect(seen).toEqual([]);
  });

  it('a single panel is one faceted chart', () => {
    const one = sweepCharts(sweepRows()).find((c) => c.name === 'pareto')!.spec as Spec;
    expect(one['vconcat']).toBeUndefined();
    expect(one['facet'].column.sort).toEqual(['10%', '25%', '50%']);
  });

  it('marks the front with the pure function, never the oracle, and draws it as a staircase in x order', () => {
    for (const panel of ['a100-pcie4', 'h100-pcie5']) {
      for (const budget of ['10%', '25%', '50%']) {
        const here = all.filter((v) => v['panel'] === panel && v['budget'] === budget);
        const online = here.filter((v) => v['kind'] === 'point' && v['series'] !== 'oracle (bound)');
        const want = paretoFront(online.map((v) => ({ x: v['tbt'], y: v['recall'] }))).map((i) => online[i]!['series']);
        expect(online.filter((v) => v['front']).map((v) => v['series']).sort()).toEqual([...want].sort());
        expect(here.find((v) => v['kind'] === 'point' && v['series'] === 'oracle (bound)')!['front']).toBe(false);
        const front = here.filter((v) => v['kind'] === 'front').map((v) => v['tbt']);
        expect(front).toEqual([...front].sort((a, b) => a - b));
      }
    }
    // fixtures at 10% on h100: h2o (26.25 ms, 89.2%) and quest (34.13 ms, 93.5%); streaming is slower and worse than h2o
    const h100 = all.filter((v) => v['kind'] === 'point' && v['panel'] === 'h100-pcie5' && v['budget'] === '10%');
    expect(h100.filter((v) => v['front']).map((v) => v['series']).sort()).toEqual(['h2o', 'quest']);
    const front = layers(kids[0]!).find((l) => l.transform?.[0]?.filter === "datum.kind === 'front'")!;
    expect(front.mark.interpolate).toBe('step-after');
  });

  it('labels every point with its policy, inside its panel', () => {
    for (const k of kids) {
      const points = values(k).filter((v) => v['kind'] === 'point');
      const labels = values(k).filter((v) => v['kind'] === 'label');
      expect(labels.map((v) => `${v['budget']}|${v['text']}`).sort()).toEqual(points.map((v) => `${v['budget']}|${v['series']}`).sort());
      const x = layers(k).find((l) => l.encoding?.x)!.encoding.x.scale.domain as [number, number];
      for (const l of labels) {
        expect(l['tbt']).toBeGreaterThanOrEqual(x[0]);
        expect(l['tbt']).toBeLessThanOrEqual(x[1]);
      }
    }
  });
});
