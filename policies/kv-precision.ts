/**
 * KV precision choices of the SLEP-style policies: FP16, plain group quantization (int8/4/2), or
 * RotateKV (Su et al., 2025): Walsh–Hadamard-rotated K/V quantized to 8, 4 or 2 bits.
 */
export interface KvPrecision {
  bits: number;
  rotation: boolean;
}

export const KV_PRECISIONS: Record<string, KvPrecision> = {
  fp16: { bits: 16, rotation: false },
  int8: { bits: 8, rotation: false },
  int4: { bits: 4, rotation: false },
  int2: { bits: 2, rotation: false },
  'rotatekv-8': { bits: 8, rotation: true },
  'rotatekv-4': { bits: 4, rotation: true },
  'rotatekv-2': { bits: 2, rotation: true },
};
