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

/** The colour a series is drawn in (the same as `seriesEncodings` gives it). */
export function seriesColor(s: SeriesInfo, series: string): string {
  if (series === ORACLE_LABEL && s.hasOracle) return ORACLE_COLOR;
  const i = seriesDomain(s).indexOf(series);
  return i < 0 ? REFERENCE_COLOR : POLICY_PALETTE[i % POLICY_PALETTE.length]!;
}

/** Reference runs (the whole KV in HBM, e.g. full at 100%): a grey dotted rule. */
export const REFERENCE_COLOR = '#6b6b6b';
export const REFERENCE_DASH = [2, 3];
