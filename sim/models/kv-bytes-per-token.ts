import { kvBytes, type ModelSpec } from './model.js';

/**
 * KV-cache bytes one token takes over all layers at `bits` per value (16 = FP16), with each group of
 * `groupSize` values carrying its FP16 scale and zero point (see kvBytes in model.ts; groups are
 * formed within one token's values of one layer).
 */
export function kvBytesPerToken(model: ModelSpec, bits: number, groupSize = 128): number {
  return model.layers * kvBytes(model, 1, bits, groupSize);
}
