/**
 * Bytes of a model's weights at a storage precision. Below 16 bits the weights are group-quantized
 * (as GPTQ/AWQ-style INT4 and Q8 checkpoints store them): `bits` per weight packed, plus
 * `scaleBytes` per group of `groupSize` weights (4 = an FP16 scale and an FP16 zero point, 2 = an
 * FP16 scale alone, 0 = scales not counted). 16 bits is the FP16 size of the model preset.
 */
import type { PolicyModel } from './policy-model.js';

export const WEIGHT_BITS = [16, 8, 4] as const;

export interface WeightFormat {
  bits: number;
  groupSize: number;
  scaleBytes: number;
}

export const FP16_WEIGHTS: WeightFormat = { bits: 16, groupSize: 128, scaleBytes: 4 };

/** Bytes of `params` weights in format `f`. */
export function weightBytes(params: number, f: WeightFormat): number {
  if (!(WEIGHT_BITS as readonly number[]).includes(f.bits)) throw new Error(`weight bits must be one of ${WEIGHT_BITS.join(', ')} (got ${f.bits})`);
  if (f.bits === 16) return params * 2;
  if (!(Number.isInteger(f.groupSize) && f.groupSize >= 1)) throw new Error(`weight group size must be an integer >= 1 (got ${f.groupSize})`);
  if (!(f.scaleBytes >= 0)) throw new Error(`weight scale bytes must be >= 0 (got ${f.scaleBytes})`);
  return Math.ceil((params * f.bits) / 8) + Math.ceil(params / f.groupSize) * f.scaleBytes;
}

/** One transformer layer's weights (the preset's FP16 bytes / 2 parameters) in format `f`. */
export function layerWeightBytes(m: Pick<PolicyModel, 'weight_bytes_per_layer' | 'other_weight_bytes'>, f: WeightFormat): number {
  return weightBytes(m.weight_bytes_per_layer / 2, f);
}

/** The weights outside the layers (embeddings, LM head) in format `f`. */
export function otherWeightBytes(m: Pick<PolicyModel, 'weight_bytes_per_layer' | 'other_weight_bytes'>, f: WeightFormat): number {
  return weightBytes(m.other_weight_bytes / 2, f);
}
