/**
 * Scale arithmetic for charts whose domains are set by the report rather than by Vega: padded
 * domains (linear or log), room on the right for end-of-line labels, and labels moved apart
 * vertically so that none overlaps another.
 */

export type ScaleKind = 'linear' | 'log';

/** [lo, hi] padded by `pad` of the span on each side (log: of the span in log space). */
export function paddedDomain(values: number[], kind: ScaleKind, pad = 0.06): [number, number] {
  const v = values.filter((x) => Number.isFinite(x) && (kind === 'linear' || x > 0));
  if (v.length === 0) return kind === 'log' ? [1, 10] : [0, 1];
  const f = kind === 'log' ? Math.log10 : (x: number) => x;
  const g = kind === 'log' ? (x: number) => 10 ** x : (x: number) => x;
  let lo = f(Math.min(...v));
  let hi = f(Math.max(...v));
  const span = hi - lo || Math.abs(lo) * 0.5 || 1;
  lo -= span * pad;
  hi += span * pad;
  return [g(lo), g(hi)];
}

/** The domain extended to the right so that the last `rightPx` of `widthPx` pixels hold no data. */
export function withRightMargin(domain: [number, number], kind: ScaleKind, widthPx: number, rightPx: number): [number, number] {
  const f = kind === 'log' ? Math.log10 : (x: number) => x;
  const g = kind === 'log' ? (x: number) => 10 ** x : (x: number) => x;
  const lo = f(domain[0]);
  const hi = f(domain[1]);
  const dataPx = Math.max(1, widthPx - rightPx);
  return [domain[0], g(lo + ((hi - lo) * widthPx) / dataPx)];
}

/** Pixel offset from the top of a vertical axis of `heightPx` for value v. */
export function toPixel(v: number, domain: [number, number], kind: ScaleKind, heightPx: number): number {
  const f = kind === 'log' ? Math.log10 : (x: number) => x;
  const t = (f(v) - f(domain[0])) / (f(domain[1]) - f(domain[0]) || 1);
  return heightPx * (1 - t);
}

export function fromPixel(px: number, domain: [number, number], kind: ScaleKind, heightPx: number): number {
  const f = kind === 'log' ? Math.log10 : (x: number) => x;
  const g = kind === 'log' ? (x: number) => 10 ** x : (x: number) => x;
  const t = 1 - px / heightPx;
  return g(f(domain[0]) + t * (f(domain[1]) - f(domain[0])));
}

/**
 * Label positions (pixels from the top), each as close to its wanted position as it can be while
 * every two are at least `gap` apart and all lie within [0, heightPx]; input order is kept in the
 * output. Labels keep their top-to-bottom order (ties: input order).
 */
export function spreadLabels(wanted: number[], gap: number, heightPx: number): number[] {
  const order = wanted.map((_, i) => i).sort((a, b) => wanted[a]! - wanted[b]! || a - b);
  const pos = order.map((i) => wanted[i]!);
  // push down past each neighbour, then pull back up from the bottom edge
  for (let k = 0; k < pos.length; k++) pos[k] = Math.max(pos[k]!, k === 0 ? 0 : pos[k - 1]! + gap);
  for (let k = pos.length - 1; k >= 0; k--) pos[k] = Math.min(pos[k]!, k === pos.length - 1 ? heightPx : pos[k + 1]! - gap);
  const out = new Array<number>(wanted.length);
  order.forEach((i, k) => (out[i] = pos[k]!));
  return out;
}

/** Where value v falls along a domain, 0 at its start and 1 at its end. */
export function fractionOf(v: number, domain: [number, number], kind: ScaleKind): number {
  const f = kind === 'log' ? Math.log10 : (x: number) => x;
  return (f(v) - f(domain[0])) / (f(domain[1]) - f(domain[0]) || 1);
}

export function valueAt(t: number, domain: [number, number], kind: ScaleKind): number {
  const f = kind === 'log' ? Math.log10 : (x: number) => x;
  const g = kind === 'log' ? (x: number) => 10 ** x : (x: number) => x;
  return g(f(domain[0]) + t * (f(domain[1]) - f(domain[0])));
}

export interface PointLabel {
  /** the point, in pixels from the panel's left and top */
  px: number;
  py: number;
  /** estimated text width in pixels */
  width: number;
}

export interface PlacedLabel {
  /** the text's anchor, in pixels */
  x: number;
  y: number;
  align: 'left' | 'right';
}

const LABEL_HEIGHT = 11;
const POINT_RADIUS = 5;

/**
 * Greedy placement of point labels inside a panel: each label, in input order, takes the first of
 * six places around its point (right, left, then above and below on either side; left first for
 * points in the right half) that overlaps no placed label, no point, no `taken` box and no panel
 * edge, or else the place with the least overlap.
 */
export function placePointLabels(
  labels: PointLabel[],
  widthPx: number,
  heightPx: number,
  /** boxes already taken (e.g. another text), [x0, y0, x1, y1] in pixels */
  taken: [number, number, number, number][] = [],
): PlacedLabel[] {
  const boxes: [number, number, number, number][] = [...taken];
  const points = labels.map((l) => [l.px - POINT_RADIUS, l.py - POINT_RADIUS, l.px + POINT_RADIUS, l.py + POINT_RADIUS] as [number, number, number, number]);
  const area = (a: number[], b: number[]) =>
    Math.max(0, Math.min(a[2]!, b[2]!) - Math.max(a[0]!, b[0]!)) * Math.max(0, Math.min(a[3]!, b[3]!) - Math.max(a[1]!, b[1]!));
  return labels.map((l) => {
    const right = (dx: number, dy: number): PlacedLabel => ({ x: l.px + dx, y: l.py + dy, align: 'left' });
    const left = (dx: number, dy: number): PlacedLabel => ({ x: l.px - dx, y: l.py + dy, align: 'right' });
    const h = LABEL_HEIGHT;
    const sides = [
      [right(7, 0), right(4, -h), right(4, h)],
      [left(7, 0), left(4, -h), left(4, h)],
    ];
    const [first, second] = l.px > widthPx / 2 ? [sides[1]!, sides[0]!] : [sides[0]!, sides[1]!];
    const candidates = [first[0]!, second[0]!, first[1]!, first[2]!, second[1]!, second[2]!];
    let best: { c: PlacedLabel; box: [number, number, number, number]; cost: number } | undefined;
    for (const c of candidates) {
      const x0 = c.align === 'left' ? c.x : c.x - l.width;
      const box: [number, number, number, number] = [x0, c.y - h / 2, x0 + l.width, c.y + h / 2];
      const outside = l.width * h - area(box, [0, 0, widthPx, heightPx]);
      const cost = boxes.reduce((s, b) => s + area(box, b), 0) + points.reduce((s, b) => s + area(box, b), 0) + outside;
      if (!best || cost < best.cost) best = { c, box, cost };
      if (cost === 0) break;
    }
    boxes.push(best!.box);
    return best!.c;
  });
}
