/** Per-step relative error of predicted vs measured, and its median and 95th percentile. */
export function absRelErrors(pred: number[], meas: number[]): number[] {
  return pred.map((p, i) => Math.abs(p - meas[i]) / Math.max(Math.abs(meas[i]), 1e-12));
}

export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}
