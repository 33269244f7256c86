// The quality table the simulator reads: attention-output error of quantized vs FP16 KV
// per (bits, group size, rotation), with how and where it was measured.
import { writeFileSync } from 'node:fs';
import type { QualityOptions, QualityResult } from './quality.js';

export const QUALITY_TABLE_SCHEMA = 'kvtier.hil.quality-table/1';

export interface QualityTable {
  schema: typeof QUALITY_TABLE_SCHEMA;
  generatedAt: string;
  backend: string;
  device: string;
  data: string;
  shape: { contextTokens: number; qHeads: number; kvHeads: number; headDim: number; blockTokens: number };
  rows: QualityResult['rows'];
  policies: QualityResult['policies'];
}

export function qualityTable(result: QualityResult, o: QualityOptions, backend: string, device: string): QualityTable {
  return {
    schema: QUALITY_TABLE_SCHEMA,
    generatedAt: new Date().toISOString(),
    backend,
    device,
    data:
      `Gaussian K/V (unit scale), ${o.outlierChannels} outlier key channels x${o.outlierScale}` +
      (o.concentrated ? `, attention concentrated on 4 sink tokens and the last ${o.recentTokens}` : '') +
      `, seed ${o.seed}`,
    shape: { contextTokens: o.contextTokens, qHeads: o.qHeads, kvHeads: o.kvHeads, headDim: o.headDim, blockTokens: o.blockTokens },
    rows: result.rows,
    policies: result.policies,
  };
}

/** The measured output RMSE for a setting, or undefined when the table lacks it. */
export function lookupQuality(t: QualityTable, bits: number, groupSize: number, rotation: boolean): number | undefined {
  return t.rows.find((r) => r.bits === bits && r.groupSize === groupSize && r.rotation === rotation)?.outputRmse;
}

export function writeQualityTable(path: string, t: QualityTable): void {
  writeFileSync(path, `${JSON.stringify(t, null, 2)}\n`);
}
