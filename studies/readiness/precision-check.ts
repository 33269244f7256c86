/**
 * Precision decay: each quantized block format a policy stores, held to MAX_RMSE on two named
 * readings from the measured error table (sim/quality/measured-quality-h100.json):
 * - attention-output RMSE vs FP16 (`outputRmse`: the attention output computed from the dequantized
 *   K/V against the FP16 output);
 * - per-element KV RMSE (`kvRmse`: relative RMS error of the dequantized K/V values).
 * A format the table has no measurement for fails that reading (no number to hold to the bound).
 * The run's simulated mass-weighted quantization error (summary.json quant_error) is shown beside them.
 */
import measured from '../../sim/quality/measured-quality-h100.json' with { type: 'json' };
import { MEASURED_SOURCE } from '../../sim/quality/measured-table.js';
import type { QuantFormat } from './claims.js';
import type { CheckVerdict, Reading } from './verdict.js';

export const MAX_RMSE = 0.012;

export interface MeasuredQuality {
  outputRmse: number;
  kvRmse: number;
}

export type MeasuredLookup = (f: QuantFormat) => MeasuredQuality | null;

interface Row {
  bits: number;
  groupSize: number;
  rotation: boolean;
  outputRmse: number;
  kvRmse: number;
}

/** The measured table's row for a format, or null where it holds none. */
export const measuredQuality: MeasuredLookup = (f) => {
  const r = (measured.rows as Row[]).find((x) => x.bits === f.bits && x.groupSize === f.group && x.rotation === f.rotation);
  return r ? { outputRmse: r.outputRmse, kvRmse: r.kvRmse } : null;
};

export const PRECISION_SOURCE = `${MEASURED_SOURCE}; data: ${measured.data}`;

export function formatName(f: QuantFormat): string {
  return `INT${f.bits} G${f.group}${f.rotation ? ' rotated' : ''}`;
}

export function judgePrecision(
  policy: string,
  formats: readonly QuantFormat[],
  lookup: MeasuredLookup,
  simQuantError: number | null,
  method: string,
): CheckVerdict {
  const readings: Reading[] = [];
  for (const f of formats) {
    const m = lookup(f);
    const name = formatName(f);
    readings.push({
      name: `${name}: attention-output RMSE vs FP16`,
      value: m ? m.outputRmse : null,
      criterion: `< ${MAX_RMSE}`,
      pass: m !== null && m.outputRmse < MAX_RMSE,
      source: m ? PRECISION_SOURCE : 'no measurement for this format',
    });
    readings.push({
      name: `${name}: per-element KV RMSE`,
      value: m ? m.kvRmse : null,
      criterion: `< ${MAX_RMSE}`,
      pass: m !== null && m.kvRmse < MAX_RMSE,
      source: m ? PRECISION_SOURCE : 'no measurement for this format',
    });
  }
  const byReading = (suffix: string) => readings.filter((r) => r.name.endsWith(suffix)).every((r) => r.pass);
  return {
    check: 'precision',
    policy,
    pass: formats.length > 0 && readings.every((r) => r.pass),
    readings,
    method,
    details: {
      attention_output_rmse_pass: formats.length > 0 && byReading('attention-output RMSE vs FP16'),
      kv_element_rmse_pass: formats.length > 0 && byReading('per-element KV RMSE'),
      sim_quant_error_mean: simQuantError,
    },
  };
}
