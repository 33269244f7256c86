/**
 * How policies look on every chart: one fixed colour per policy (same colour on every chart of
 * a report), and the oracle — when the sweep has one — as a dashed black line named "oracle (bound)".
 */
export const ORACLE_LABEL = 'oracle (bound)';
export const ORACLE_COLOR = '#000000';
export const ORACLE_DASH = [6, 4];

/** Vega's tableau10, which has no black, so nothing can be mistaken for the bound. */
export const POLICY_PALETTE = [
  '#4c78a8', '#f58518', '#54a24b', '#e45756', '#72b7b2',
  '#eeca3b', '#b279a2', '#ff9da6', '#9d755d', '#bab0ac',
  // ten more, distinct from the first ten, for sweeps over the whole policy library
  '#003f5c', '#ffa600', '#665191', '#17becf', '#8c564b',
  '#bcbd22', '#d45087', '#2ca02c', '#7f7f7f', '#a6cee3',
];

export interface SeriesInfo {
  /** policies other than the oracle, in legend order */
  policies: string[];
  hasOracle: boolean;
}

/** A data row's series name: the policy, or the oracle's label. */
export function seriesName(policy: string, oracle: string): string {
  return policy === oracle ? ORACLE_LABEL : policy;
}

export function seriesDomain(s: SeriesInfo): string[] {
  return s.hasOracle ? [...s.policies, ORACLE_LABEL] : [...s.policies];
}

/**
 * Colour (and, with an oracle, dash) encodings on the `series` field. Both channels share the
 * field and the legend title, so Vega-Lite merges them into one legend whose oracle entry is a
 * dashed black line.
 */
export function seriesEncodings(s: SeriesInfo): Record<string, unknown> {
  const domain = seriesDomain(s);
  const color = {
    field: 'series',
    type: 'nominal',
    title: 'policy',
    legend: { symbolType: 'stroke' },
    scale: {
      domain,
      range: domain.map((d, i) => (d === ORACLE_LABEL ? ORACLE_COLOR : POLICY_PALETTE[i % POLICY_PALETTE.length])),
    },
  };
  if (!s.hasOracle) return { color };
  const strokeDash = {
    field: 'series',
    type: 'nominal',
    title: 'policy',
    legend: { symbolType: 'stroke' },
    scale: { domain, range: domain.map((d) => (d === ORACLE_LABEL ? ORACLE_DASH : [1, 0])) },
  };
  return { color, strokeDash };
}

/**
 * The text layer (x and y come from the parent) that writes "oracle (bound)" at the rows whose
 * `label` field is set, just left of
 * that point, on the side of the line away from the other policies: below where the bound is a
 * minimum (latency), above where it is a maximum (recall).
 */
export function oracleLabelLayer(side: 'above' | 'below'): Record<string, unknown> {
  const place = side === 'above' ? { baseline: 'bottom', dy: -7 } : { baseline: 'top', dy: 7 };
  return {
    transform: [{ filter: 'isValid(datum.label)' }],
    mark: { type: 'text', align: 'right', ...place, dx: -4, fontSize: 11, color: ORACLE_COLOR },
    encoding: { text: { field: 'label' } },
  };
}
