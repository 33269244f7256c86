// Reference paged, mixed-precision decode attention in float64, reading the block bytes
// exactly as laid out in hil/kv-format.ts.
import { halfToFloat } from '../half.js';
import {
  type BlockEntry,
  type BlockGeometry,
  PRECISION_BITS,
  kMetaOffset,
  vMetaOffset,
  vOffset,
} from '../kv-format.js';

export interface AttentionShape {
  qHeads: number;
  kvHeads: number;
  headDim: number;
  blockTokens: number;
  groupSize: number;
  contextTokens: number;
  softmaxScale?: number;
}

export const geometryOf = (s: AttentionShape): BlockGeometry => ({
  kvHeads: s.kvHeads,
  blockTokens: s.blockTokens,
  headDim: s.headDim,
  groupSize: s.groupSize,
});

/** Element e of the K or V section of the block at `offset`, as the kernels see it. */
export function blockElementRef(arena: Uint8Array, entry: BlockEntry, g: BlockGeometry, isV: boolean, e: number): number {
  const u16 = (at: number): number => arena[at]! | (arena[at + 1]! << 8);
  if (entry.precision === 'fp16') return halfToFloat(u16(entry.offset + (isV ? vOffset(g, 'fp16') : 0) + e * 2));
  const bits = PRECISION_BITS[entry.precision];
  const codesStart = entry.offset + (isV ? vOffset(g, entry.precision) : 0);
  const metaAt = entry.offset + (isV ? vMetaOffset(g, entry.precision) : kMetaOffset(g, entry.precision)) + 4 * Math.floor(e / g.groupSize);
  const bit = e * bits;
  const shift = bit & 7;
  const at = codesStart + (bit >> 3);
  const word = shift + bits > 8 ? arena[at]! | (arena[at + 1]! << 8) : arena[at]!;
  const code = (word >> shift) & ((1 << bits) - 1);
  return Math.fround(halfToFloat(u16(metaAt + 2)) + code * halfToFloat(u16(metaAt)));
}

/** out[hq][d] for q [qHeads][headDim]; softmaxScale defaults to 1/sqrt(headDim). */
export function pagedAttentionRef(
  s: AttentionShape,
  arena: Uint8Array,
  table: readonly BlockEntry[],
  q: ArrayLike<number>,
): Float64Array {
  const g = geometryOf(s);
  const D = s.headDim;
  const L = s.contextTokens;
  const group = s.qHeads / s.kvHeads;
  const scale = s.softmaxScale ?? 1 / Math.sqrt(D);
  const out = new Float64Array(s.qHeads * D);
  const k = new Float64Array(L * D);
  const v = new Float64Array(L * D);
  for (let h = 0; h < s.kvHeads; h++) {
    for (let t = 0; t < L; t++) {
      const entry = table[Math.floor(t / s.blockTokens)]!;
      const row = (h * s.blockTokens + (t % s.blockTokens)) * D;
      for (let d = 0; d < D; d++) {
        k[t * D + d] = blockElementRef(arena, entry, g, false, row + d);
        v[t * D + d] = blockElementRef(arena, entry, g, true, row + d);
      }
    }
    for (let j = 0; j < group; j++) {
      const hq = h * group + j;
      const scores = new Float64Array(L);
      let mx = -Infinity;
      for (let t = 0; t < L; t++) {
        let dot = 0;
        for (let d = 0; d < D; d++) dot += q[hq * D + d]! * k[t * D + d]!;
        scores[t] = dot * scale;
        mx = Math.max(mx, scores[t]!);
      }
      let sum = 0;
      for (let t = 0; t < L; t++) {
        scores[t] = Math.exp(scores[t]! - mx);
        sum += scores[t]!;
      }
      for (let t = 0; t < L; t++) {
        const p = scores[t]! / sum;
        for (let d = 0; d < D; d++) out[hq * D + d]! += p * v[t * D + d]!;
      }
    }
  }
  return out;
}
