import type { LinkDirection } from './profile.js';

/** One measured copy: `bytes` moved in `us` microseconds. */
export interface CopyPoint {
  bytes: number;
  us: number;
}

/** A fitted link direction plus how well it reproduces the points it was fitted to. */
export interface LinkFit extends LinkDirection {
  /** largest |predicted / measured - 1| over the points */
  maxRelError: number;
}

/** time (µs) the model time = alpha + bytes / beta gives; GBps is 1e9 bytes/s = 1e3 bytes/µs. */
export function linkTimeUs(d: LinkDirection, bytes: number): number {
  return d.alpha_us + bytes / (d.GBps * 1e3);
}

export function maxRelError(d: LinkDirection, points: readonly CopyPoint[]): number {
  return Math.max(...points.map((p) => Math.abs(linkTimeUs(d, p.bytes) / p.us - 1)));
}

/**
 * Least squares of time = alpha + bytes/beta. `relative` weights each point by 1/time², i.e. it
 * minimises the squared *relative* error, so small copies count as much as large ones; plain least
 * squares lets the largest copy decide alpha (it can come out negative).
 */
export function fitLinkLeastSquares(points: readonly CopyPoint[], relative = true): LinkFit {
  requirePoints(points);
  let s = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const { bytes: x, us: y } of points) {
    const w = relative ? 1 / (y * y) : 1;
    s += w;
    sx += w * x;
    sy += w * y;
    sxx += w * x * x;
    sxy += w * x * y;
  }
  const slope = (s * sxy - sx * sy) / (s * sxx - sx * sx);
  const alpha = (sy - slope * sx) / s;
  return withError({ alpha_us: alpha, GBps: 1 / (slope * 1e3) }, points);
}

/**
 * Minimax (Chebyshev) fit: the alpha and beta whose largest relative error over the points is
 * smallest. The largest relative error is a convex function of (alpha, 1/beta), so a nested
 * ternary search finds the optimum to ~1e-12 relative.
 */
export function fitLinkMinimax(points: readonly CopyPoint[]): LinkFit {
  requirePoints(points);
  const err = (alpha: number, slope: number): number =>
    Math.max(...points.map((p) => Math.abs((alpha + p.bytes * slope) / p.us - 1)));
  const maxUs = Math.max(...points.map((p) => p.us));
  const maxSlope = Math.max(...points.map((p) => p.us / p.bytes)) * 2;
  const bestAlpha = (slope: number): number => ternaryMin((a) => err(a, slope), -maxUs, maxUs);
  const slope = ternaryMin((b) => err(bestAlpha(b), b), 0, maxSlope);
  return withError({ alpha_us: bestAlpha(slope), GBps: 1 / (slope * 1e3) }, points);
}

function ternaryMin(f: (x: number) => number, lo: number, hi: number): number {
  for (let i = 0; i < 120; i++) {
    const m1 = lo + (hi - lo) / 3;
    const m2 = hi - (hi - lo) / 3;
    if (f(m1) <= f(m2)) hi = m2;
    else lo = m1;
  }
  return (lo + hi) / 2;
}

function withError(d: LinkDirection, points: readonly CopyPoint[]): LinkFit {
  return { ...d, maxRelError: maxRelError(d, points) };
}

function requirePoints(points: readonly CopyPoint[]): void {
  if (points.length < 2) throw new Error(`fit-link: need at least 2 copy points (got ${points.length})`);
  for (const p of points) {
    if (!(p.bytes > 0 && p.us > 0)) throw new Error(`fit-link: bytes and us must be > 0 (got ${p.bytes} B, ${p.us} µs)`);
  }
  if (new Set(points.map((p) => p.bytes)).size < 2) throw new Error('fit-link: need at least 2 distinct sizes');
}
