/**
 * Quantization errors measured by the hardware-in-the-loop layer on real kernels (`hil/quality.ts`,
 * H100, 2026-11-22): K/V tensors quantized and dequantized by the CUDA kernels, relative RMS error of
 * the values (unit-scale Gaussian data with 4 outlier key channels x8). They replace the model's
 * entries of the default table; 3-bit entries (not measured) stay modelled.
 */
import measured from '../../hil/data/quality-realistic-h100.json' with { type: 'json' };
import type { QuantErrorEntry } from './error-table.js';

interface MeasuredRow {
  bits: number;
  groupSize: number;
  rotation: boolean;
  kvRmse: number;
  outputRelL2: number;
}

export const MEASURED_SOURCE = `measured: kvtier hil quality on ${measured.device} (${measured.backend}), ${measured.generatedAt.slice(0, 10)}, hil/data/quality-realistic-h100.json`;

export function measuredEntries(): QuantErrorEntry[] {
  return (measured.rows as MeasuredRow[]).map((r) => ({
    bits: r.bits,
    group: r.groupSize,
    rotation: r.rotation,
    rel_error: r.kvRmse,
    source: `${MEASURED_SOURCE}; data: ${measured.data}`,
  }));
}
