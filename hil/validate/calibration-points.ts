/**
 * Calibration points that a validation grid never sees: the context lists of the calibration
 * microbenchmarks (calibrate/measure.ts) with every context within `margin` (relative) of a grid
 * context left out, so that no benchmark is taken at a context the grid is judged on.
 */
import type { CalibrationPoints } from '../calibrate/measure.js';

/** candidate contexts (tokens) for the attention kernels and the layer chains */
export const CANDIDATE_CONTEXTS = [256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 10240, 12288, 16384, 20480, 24576, 40960, 49152, 65536, 98304, 163840];
/** the quick candidates (host backend, tests) */
export const QUICK_CANDIDATE_CONTEXTS = [128, 192, 256, 384, 512, 768, 1024, 1536, 2048];

/** true when x is within margin of a grid context (|x - c| <= margin * c) */
export function nearGrid(x: number, gridContexts: readonly number[], margin: number): boolean {
  return gridContexts.some((c) => Math.abs(x - c) <= margin * c);
}

/**
 * The held-out points: candidates not near a grid context; attention kernels at up to `maxKernel`
 * of them spread over the range, layer chains at all of them up to the largest grid context's next
 * candidate (so the simulator's attention curve brackets every grid context where it can); the
 * layout copies and the file batches (whose buffers and file grow with it) at the largest candidate
 * below the smallest grid context, the overlap at the candidate nearest (in log scale) to the
 * geometric mean of the grid's contexts. Throws when fewer than two candidates are left.
 */
export function heldOutPoints(gridContexts: readonly number[], o: { quick?: boolean; margin?: number; maxKernel?: number } = {}): CalibrationPoints {
  const margin = o.margin ?? 0.1;
  const all = o.quick ? QUICK_CANDIDATE_CONTEXTS : CANDIDATE_CONTEXTS;
  const top = Math.max(...gridContexts);
  const above = all.find((c) => c > top * (1 + margin));
  const usable = all.filter((c) => !nearGrid(c, gridContexts, margin) && c <= (above ?? Infinity));
  if (usable.length < 2) throw new Error(`calibration points: fewer than two candidate contexts are more than ${margin * 100}% away from the grid's contexts (${gridContexts.join(', ')})`);
  const maxKernel = o.maxKernel ?? (o.quick ? 2 : 7);
  const kernel = spread(usable, maxKernel);
  const geo = Math.exp(gridContexts.reduce((a, c) => a + Math.log(c), 0) / gridContexts.length);
  const mid = usable.reduce((best, c) => (Math.abs(Math.log(c / geo)) < Math.abs(Math.log(best / geo)) ? c : best), usable[0]);
  const low = [...usable].reverse().find((c) => c < Math.min(...gridContexts)) ?? usable[0];
  return { attention_contexts: kernel, situ_contexts: usable, layout_context: low, file_context: low, overlap_context: mid };
}

/** k elements of a sorted list, evenly spaced by index, first and last included */
export function spread<T>(xs: readonly T[], k: number): T[] {
  if (xs.length <= k) return [...xs];
  if (k <= 1) return [xs[0]];
  return Array.from({ length: k }, (_, i) => xs[Math.round((i * (xs.length - 1)) / (k - 1))]);
}

/** every point of a calibration that lies within margin of a grid context (empty: held out) */
export function pointsNearGrid(p: CalibrationPoints, gridContexts: readonly number[], margin = 0): number[] {
  const xs = [...p.attention_contexts, ...p.situ_contexts, p.layout_context, p.file_context, p.overlap_context];
  return [...new Set(xs.filter((x) => nearGrid(x, gridContexts, margin)))].sort((a, b) => a - b);
}
