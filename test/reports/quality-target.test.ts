import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readQualityTarget } from '../../reports/sweep-dir-report.js';
import { DEFAULT_TARGET } from '../../reports/recommend.js';
import { parseSweepSpec } from '../../studies/sweep-spec.js';

const dir = mkdtempSync(join(tmpdir(), 'kvtier-target-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = { traces: ['t.kvt'], policies: ['h2o'], budgets: ['10%'], hardware: ['h100-pcie5'] };

describe('quality_target in a sweep file', () => {
  it('is kept in the spec when given, absent otherwise', () => {
    expect(parseSweepSpec({ ...base, quality_target: { recall_min: 0.95 } }, 's.json').quality_target).toEqual({ recall_min: 0.95 });
    expect('quality_target' in parseSweepSpec(base, 's.json')).toBe(false);
  });

  it('rejects bad values naming the file and the field', () => {
    expect(() => parseSweepSpec({ ...base, quality_target: { recall_min: 1.2 } }, 's.json')).toThrow(
      's.json: quality_target.recall_min must be a number in [0, 1] (got 1.2)',
    );
    expect(() => parseSweepSpec({ ...base, quality_target: { recall: 0.9 } }, 's.json')).toThrow(
      's.json: quality_target: unknown field "recall" (fields: recall_min, quant_error_max)',
    );
    expect(() => parseSweepSpec({ ...base, quality_target: 0.99 }, 's.json')).toThrow('"quality_target" must be an object');
  });

  it('reaches the report through sweep.json, over the defaults', () => {
    const p = join(dir, 'sweep.json');
    writeFileSync(p, JSON.stringify({ spec: { ...base, quality_target: { quant_error_max: 0.05 } } }));
    expect(readQualityTarget(p)).toEqual({ recallMin: DEFAULT_TARGET.recallMin, quantErrorMax: 0.05 });
    writeFileSync(p, JSON.stringify({ spec: base }));
    expect(readQualityTarget(p)).toEqual(DEFAULT_TARGET);
    expect(readQualityTarget(join(dir, 'missing.json'))).toEqual(DEFAULT_TARGET);
  });
});
