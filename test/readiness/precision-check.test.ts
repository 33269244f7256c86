import { describe, expect, it } from 'vitest';
import measured from '../../sim/quality/measured-quality-h100.json' with { type: 'json' };
import { MAX_RMSE, judgePrecision, measuredQuality, type MeasuredLookup } from '../../studies/readiness/precision-check.js';

describe('precision rule', () => {
  const table: MeasuredLookup = (f) => (f.bits === 8 ? { outputRmse: 0.005, kvRmse: 0.011 } : f.bits === 4 ? { outputRmse: 0.0054, kvRmse: 0.0997 } : null);

  it('holds both named readings to 0.012: INT8 passes both, INT4 passes output RMSE only', () => {
    expect(MAX_RMSE).toBe(0.012);
    const v8 = judgePrecision('p', [{ bits: 8, group: 128, rotation: false }], table, null, 'm');
    expect(v8.pass).toBe(true);
    const v4 = judgePrecision('p', [{ bits: 4, group: 128, rotation: false }], table, 0.1, 'm');
    expect(v4.readings.map((r) => [r.name, r.value, r.pass])).toEqual([
      ['INT4 G128: attention-output RMSE vs FP16', 0.0054, true],
      ['INT4 G128: per-element KV RMSE', 0.0997, false],
    ]);
    expect(v4.pass).toBe(false);
    expect(v4.details).toMatchObject({ attention_output_rmse_pass: true, kv_element_rmse_pass: false, sim_quant_error_mean: 0.1 });
  });

  it('fails a format without a measurement, and a policy with no quantized format', () => {
    const v = judgePrecision('p', [{ bits: 3, group: 128, rotation: false }], table, null, 'm');
    expect(v.pass).toBe(false);
    expect(v.readings[0]).toMatchObject({ value: null, source: 'no measurement for this format' });
    expect(judgePrecision('p', [], table, null, 'm').pass).toBe(false);
  });

  it('reads the simulator\'s measured table row by row', () => {
    const row = measured.rows.find((r) => r.bits === 8 && r.groupSize === 64 && r.rotation)!;
    expect(measuredQuality({ bits: 8, group: 64, rotation: true })).toEqual({ outputRmse: row.outputRmse, kvRmse: row.kvRmse });
    expect(measuredQuality({ bits: 3, group: 128, rotation: false })).toBeNull();
  });
});
