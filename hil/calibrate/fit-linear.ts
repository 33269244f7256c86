/**
 * Least-squares fits of time = alpha + bytes / beta (mathjs). `relative` weights each point by
 * 1 / time (minimizes relative error, for copies spanning sizes); otherwise plain least squares on
 * time (the big kernels that dominate a step weigh most). Residuals are relative: (fit - measured) / measured.
 */
import { lusolve, multiply, transpose } from 'mathjs';

export interface Point {
  bytes: number;
  us: number;
  label?: string;
}

export interface LinearFit {
  alpha_us: number;
  GBps: number;
  points: (Point & { fit_us: number; residual: number })[];
  rms_residual: number;
  max_abs_residual: number;
  /** set when the least-squares fit was degenerate (time did not grow with bytes) and a fallback was used */
  degenerate?: string;
}

/**
 * Fallback when least squares finds no positive time per byte (noisy or cache-served points: the time
 * does not grow with the bytes): the per-byte cost of the largest point alone, alpha 0. Flagged in
 * `degenerate` so reports show it; never used silently.
 */
function perByteFallback(points: (Point & { requests?: number })[], got: number): { alpha: number; perByte: number; note: string } {
  const big = points.reduce((a, p) => (p.bytes > a.bytes ? p : a), points[0]);
  return { alpha: 0, perByte: big.us / big.bytes, note: `least squares gave a non-positive time per byte (${got.toExponential(3)}): measurements too noisy; used the largest point's time per byte, alpha 0` };
}

export function predictUs(alpha_us: number, GBps: number, bytes: number): number {
  return alpha_us + bytes / (GBps * 1e3);
}

export function fitAlphaBeta(points: Point[], relative: boolean): LinearFit {
  return fitRequests(points, () => 1, relative);
}

/**
 * Batches of requests (file requests, or the copies of a layout batch) issued together:
 * time = requests x alpha + bytes / beta, relative-error least squares (mathjs), or with
 * `relative` false plain least squares on time (the big batches that make up a step weigh most).
 * Residuals relative, as fitAlphaBeta's; `bytes` of a point is the batch's total.
 */
export function fitPerRequest(points: (Point & { requests: number })[], relative = true): LinearFit {
  return fitRequests(points, (p) => p.requests, relative);
}

/** the least-squares time per byte of a line through the origin (relative or plain, as fitRequests) */
function throughOrigin(points: readonly Point[], relative: boolean): number {
  return relative
    ? points.reduce((a, p) => a + p.bytes / p.us, 0) / points.reduce((a, p) => a + (p.bytes / p.us) ** 2, 0)
    : points.reduce((a, p) => a + p.bytes * p.us, 0) / points.reduce((a, p) => a + p.bytes * p.bytes, 0);
}

/** time = requests(p) x alpha + bytes / beta; fitAlphaBeta is the case of one request per point */
function fitRequests<P extends Point>(points: P[], requests: (p: P) => number, relative: boolean): LinearFit {
  if (points.length < 2) throw new Error('a fit needs at least two points');
  let alpha: number;
  let perByte: number;
  let degenerate: string | undefined;
  const each = points[0].bytes / requests(points[0]);
  if (points.every((p) => Math.abs(p.bytes / requests(p) - each) <= 1e-9 * each)) {
    // every request of one size: requests and bytes are proportional, so alpha and beta cannot be told
    // apart (the normal equations are singular); the time per byte through the origin, flagged
    alpha = 0;
    perByte = throughOrigin(points, relative);
    degenerate = `every point's requests are ${each} bytes each: alpha and beta cannot be told apart; alpha 0, the time per byte through the origin`;
  } else {
    const A = points.map((p) => (relative ? [requests(p) / p.us, p.bytes / p.us] : [requests(p), p.bytes]));
    const y = points.map((p) => (relative ? 1 : p.us));
    const At = transpose(A);
    const x = lusolve(multiply(At, A) as number[][], multiply(At, y) as number[]) as number[][];
    alpha = x[0][0];
    perByte = x[1][0];
    if (!(perByte > 0)) ({ alpha, perByte, note: degenerate } = perByteFallback(points, perByte));
  }
  if (alpha < 0) {
    // a negative intercept is not a latency: refit through the origin
    alpha = 0;
    perByte = throughOrigin(points, relative);
  }
  const GBps = 1 / perByte / 1e3;
  const pts = points.map((p) => {
    const fit = requests(p) * alpha + p.bytes * perByte;
    return { ...p, fit_us: fit, residual: (fit - p.us) / p.us };
  });
  const rms = Math.sqrt(pts.reduce((a, p) => a + p.residual ** 2, 0) / pts.length);
  return { alpha_us: alpha, GBps, points: pts, rms_residual: rms, max_abs_residual: Math.max(...pts.map((p) => Math.abs(p.residual))), ...(degenerate ? { degenerate } : {}) };
}
