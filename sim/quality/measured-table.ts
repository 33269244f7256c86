/**
 * Quantization errors measured by the hardware-in-the-loop layer on real kernels: K/V tensors
 * quantized and dequantized by the CUDA kernels, relative RMS error of the values (unit-scale
 * Gaussian data with 4 outlier key channels x8, attention on 4 sinks and the last 128 tokens,
 * seed 42, 2048 tokens, Llama-3-8B layer shape). They replace the model's entries of the default
 * table. The 3-bit entries come from `measured-quality-int3-host.json`: the same measurement on the
 * host backend (the element error comes from the reference quantizer, bit-exact with the CUDA one;
 * that run's 4-bit element errors equal the H100 file's exactly).
 *
 * Where the numbers come from: `measured-quality-h100.json` beside this file, written by the
 * quality section of `perf/hil-bench.ts` (`hil/quality.ts` measures, `hil/quality-table.ts`
 * writes `quality-realistic.json`) on an NVIDIA H100 80GB HBM3 (the lent nvidia-h100-x1 machine,
 * driver 580.159, CUDA 13.0) on 2026-11-22. Its `provenance` field says the same; the lab keeps
 * the identical table as `lab/data/hil/quality-realistic-h100.json`.
 *
 * To re-measure on a GPU machine: `npx tsc -p tsconfig.json && node dist/perf/hil-bench.js
 * --backend cuda --only quality --out DIR`, then copy `DIR/quality-realistic.json` here (keeping
 * the `provenance` field up to date). `--backend host` runs the same code on the CPU reference.
 */
import measured from './measured-quality-h100.json' with { type: 'json' };
import measuredInt3 from './measured-quality-int3-host.json' with { type: 'json' };
import type { QuantErrorEntry } from './error-table.js';

interface MeasuredRow {
  bits: number;
  groupSize: number;
  rotation: boolean;
  kvRmse: number;
  outputRelL2: number;
}

export const MEASURED_SOURCE = `measured: perf/hil-bench.ts quality section on ${measured.device} (${measured.backend}), ${measured.generatedAt.slice(0, 10)}, sim/quality/measured-quality-h100.json`;

export const MEASURED_INT3_SOURCE = `measured: hil/quality.ts on the ${measuredInt3.backend} backend (reference quantizer), ${measuredInt3.generatedAt.slice(0, 10)}, sim/quality/measured-quality-int3-host.json`;

export function measuredEntries(): QuantErrorEntry[] {
  const of = (rows: MeasuredRow[], source: string): QuantErrorEntry[] =>
    rows.map((r) => ({ bits: r.bits, group: r.groupSize, rotation: r.rotation, rel_error: r.kvRmse, source }));
  return [
    ...of(measured.rows as MeasuredRow[], `${MEASURED_SOURCE}; data: ${measured.data}`),
    ...of(measuredInt3.rows as MeasuredRow[], `${MEASURED_INT3_SOURCE}; data: ${measuredInt3.data}`),
  ];
}
