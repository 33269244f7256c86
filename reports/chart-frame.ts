/**
 * The frame every report chart shares: schema, title, inline data, facets (a column field and/or a
 * row field, only when they have more than one value) and one look (config). Chart files build
 * their layers and hand them here.
 */
import type { TopLevelSpec } from 'vega-lite';

export const VEGA_LITE_SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

export interface FacetField {
  field: string;
  /** values in display order */
  sort: string[];
  /** header title; null hides it */
  title: string | null;
}

export interface ChartFrame {
  title: string;
  /** one line, or several (a long single line widens the whole chart) */
  subtitle?: string | string[];
  values: object[];
  /** encodings shared by every layer (usually x and y) */
  encoding?: object;
  layer: object[];
  column?: FacetField;
  row?: FacetField;
  /** size of one panel; defaults depend on whether the chart is faceted */
  width?: number | { step: number };
  height?: number;
  /** extra resolve rules, e.g. independent x scales per facet column */
  resolve?: object;
  /** where a row's name goes: above each of its panels (default), or once on the left, one line per part (for narrow panels) */
  rowHeader?: 'top' | 'left';
}

export const CHART_CONFIG = {
  font: 'sans-serif',
  view: { stroke: '#d0d0d0' },
  title: { anchor: 'start', fontSize: 15, subtitleFontSize: 12, subtitleColor: '#555', offset: 12 },
  axis: { labelFontSize: 11, titleFontSize: 12, titleFontWeight: 'normal', gridColor: '#ececec' },
  header: { labelFontSize: 12, titleFontSize: 12, titleFontWeight: 'normal' },
  legend: { labelFontSize: 11, titleFontSize: 12, titleFontWeight: 'normal', symbolStrokeWidth: 2, labelLimit: 240 },
  line: { strokeWidth: 2 },
} as const;

export function chartSpec(f: ChartFrame): TopLevelSpec {
  const faceted = Boolean(f.column || f.row);
  const size = {
    width: f.width ?? (faceted ? 250 : 440),
    height: f.height ?? (faceted ? 180 : 260),
  };
  const title = f.subtitle ? { text: f.title, subtitle: f.subtitle } : f.title;
  const head = { $schema: VEGA_LITE_SCHEMA, title, data: { values: f.values } };
  const tail = { ...(f.resolve ? { resolve: f.resolve } : {}), config: CHART_CONFIG };
  const body = { ...size, ...(f.encoding ? { encoding: f.encoding } : {}), layer: f.layer };
  if (!faceted) return { ...head, ...body, ...tail } as unknown as TopLevelSpec;
  const facet: Record<string, object> = {};
  for (const key of ['column', 'row'] as const) {
    const ff = f[key];
    if (!ff) continue;
    facet[key] = {
      field: ff.field,
      type: 'nominal',
      sort: ff.sort,
      title: ff.title,
      // a row's name sits above each of its panels; longer than the panel, it would widen every column
      ...(key === 'row' ? { header: rowHeader(f.rowHeader ?? 'top', size.width) } : {}),
    };
  }
  return { ...head, facet, spec: body, ...tail } as unknown as TopLevelSpec;
}

function rowHeader(place: 'top' | 'left', width: number | { step: number }): object {
  if (place === 'left') {
    // "trace · hardware" on two lines, left of the panels
    return { labelAngle: 0, labelAlign: 'left', labelOrient: 'left', labelFontWeight: 'bold', labelExpr: "split(datum.label, ' · ')", labelLimit: 220 };
  }
  // one line per part ("trace", "hardware") so that the name fits the panel's width in any font
  return {
    labelAngle: 0,
    labelAlign: 'left',
    labelAnchor: 'start',
    labelOrient: 'top',
    labelFontWeight: 'bold',
    labelExpr: "split(datum.label, ' · ')",
    labelLimit: typeof width === 'number' ? width : 0,
  };
}

/** A row facet over panels, or none when there is only one panel. */
export function panelRow(panels: string[], title: string | null): FacetField | undefined {
  return panels.length > 1 ? { field: 'panel', sort: panels, title } : undefined;
}

/** Log scale when all values are positive and span more than `ratio` (default 20x). */
export function wantsLog(values: number[], ratio = 20): boolean {
  const finite = values.filter(Number.isFinite);
  if (finite.length < 2 || finite.some((v) => v <= 0)) return false;
  return Math.max(...finite) / Math.min(...finite) > ratio;
}
