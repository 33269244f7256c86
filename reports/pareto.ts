/**
 * The Pareto front of points where a lower x and a higher y are both better (time between tokens
 * against attention recall): the points that no other point dominates. A point dominates another
 * when it is no worse on both axes and better on at least one; equal points do not dominate each
 * other, so both stay on the front.
 */
export interface XY {
  x: number;
  y: number;
}

/** Indices of the front's points, ordered by x (then by y, higher first). Non-finite points are skipped. */
export function paretoFront(points: readonly XY[]): number[] {
  const idx = points
    .map((_, i) => i)
    .filter((i) => Number.isFinite(points[i]!.x) && Number.isFinite(points[i]!.y))
    .sort((a, b) => points[a]!.x - points[b]!.x || points[b]!.y - points[a]!.y || a - b);
  const front: number[] = [];
  // sweeping by x: a point is on the front iff its y beats every y seen at a strictly smaller x,
  // or it equals the front point just before it
  let bestY = -Infinity;
  let last: XY | undefined;
  for (const i of idx) {
    const p = points[i]!;
    if (last && p.x === last.x && p.y === last.y) {
      front.push(i);
      continue;
    }
    if (p.y > bestY) {
      front.push(i);
      bestY = p.y;
      last = p;
    }
  }
  return front;
}

export function dominates(a: XY, b: XY): boolean {
  return a.x <= b.x && a.y >= b.y && (a.x < b.x || a.y > b.y);
}
