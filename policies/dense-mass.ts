/** Expand one layer's attention (dense, or top-k + remainder spread evenly) into a mass per block. */
import type { LayerAttention } from '../traces/format.js';

export function denseMass(la: LayerAttention, out: Float64Array): Float64Array {
  const n = la.nBlocks;
  if (la.idx === null) {
    for (let b = 0; b < n; b++) out[b] = la.mass[b];
    return out;
  }
  const listed = la.idx.length;
  const uniform = n > listed ? la.remainder / (n - listed) : 0;
  for (let b = 0; b < n; b++) out[b] = uniform;
  for (let i = 0; i < listed; i++) out[la.idx[i]] = la.mass[i];
  return out;
}
