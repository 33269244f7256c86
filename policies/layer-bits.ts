/**
 * Per-layer KV precision under a byte budget, greedy by marginal error per byte: start from the
 * layers' current bits; while the KV bytes exceed the budget, lower by one rung (16 → 8 → 4 → 2) the
 * layer whose step saves bytes at the least added error per byte saved, Δerror / Δbytes with
 * error(l, b) = sensitivity[l] · e(b); ties go to the lowest layer index. Bits never rise (quantized
 * KV cannot be restored). Infeasible (every layer at the lowest rung and still over): reported.
 */
export const LADDER = [16, 8, 4, 2] as const;

export interface LayerBitsProblem {
  /** per layer: weight on the error (higher = more sensitive) */
  sensitivity: readonly number[];
  /** per layer: bits now (a LADDER value) */
  current: readonly number[];
  /** KV bytes of layer l if its quantizable blocks were at `bits` */
  bytesAt(layer: number, bits: number): number;
  /** relative error of a value stored at `bits` (0 at 16) */
  errorAt(bits: number): number;
  budget: number;
  /** lowest rung allowed (default 2) */
  minBits?: number;
}

export interface LayerBitsResult {
  bits: number[];
  bytes: number;
  feasible: boolean;
  /** the steps taken, in order: [layer, from bits, to bits] */
  steps: [number, number, number][];
}

export function allocateLayerBits(p: LayerBitsProblem): LayerBitsResult {
  const bits = p.current.slice();
  const minBits = p.minBits ?? 2;
  let bytes = 0;
  for (let l = 0; l < bits.length; l++) bytes += p.bytesAt(l, bits[l]);
  const steps: [number, number, number][] = [];
  while (bytes > p.budget) {
    let best = -1;
    let bestRatio = Infinity;
    let bestSaved = 0;
    for (let l = 0; l < bits.length; l++) {
      const i = LADDER.indexOf(bits[l] as (typeof LADDER)[number]);
      if (i < 0) throw new Error(`layer ${l}: ${bits[l]} bits is not one of ${LADDER.join(', ')}`);
      if (i + 1 >= LADDER.length || LADDER[i + 1] < minBits) continue;
      const saved = p.bytesAt(l, bits[l]) - p.bytesAt(l, LADDER[i + 1]);
      if (!(saved > 0)) continue;
      const ratio = (p.sensitivity[l] * (p.errorAt(LADDER[i + 1]) - p.errorAt(bits[l]))) / saved;
      if (ratio < bestRatio) {
        best = l;
        bestRatio = ratio;
        bestSaved = saved;
      }
    }
    if (best < 0) return { bits, bytes, feasible: false, steps };
    const to = LADDER[LADDER.indexOf(bits[best] as (typeof LADDER)[number]) + 1];
    steps.push([best, bits[best], to]);
    bits[best] = to;
    bytes -= bestSaved;
  }
  return { bits, bytes, feasible: true, steps };
}
