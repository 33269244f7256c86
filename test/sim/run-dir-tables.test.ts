/**
 * steps.arrow and steps.csv are written with flechette directly and a plain CSV writer (not
 * arquero, which `kvtier run` need not load): the bytes must be those arquero's toArrowIPC and
 * toCSV give for the same columns, over integer ranges at each type boundary, fractions, NaN,
 * nulls and no rows.
 */
import { table, toArrowIPC, toCSV } from 'arquero';
import { describe, expect, it } from 'vitest';
import { stepsArrow, stepsColumns, stepsCsv } from '../../sim/run-dir.js';
import type { StepRow } from '../../sim/metrics/summary.js';

const arquero = (cols: [string, any[]][]) => {
  const t = table(Object.fromEntries(cols));
  return { arrow: toArrowIPC(t, { format: 'file' }) as Uint8Array, csv: toCSV(t) };
};

const COLUMNS: [string, any[]][] = [
  ['int8', [0, 127, -128, 5]],
  ['int8_edge', [-129, 0, 1, 2]],
  ['int16', [128, -1, 0, 3]],
  ['int16_top', [32767, -32768, 1, 0]],
  ['int32', [32768, 0, -5, 7]],
  ['int32_top', [2 ** 31 - 1, -(2 ** 31), 0, 1]],
  ['big', [2 ** 31, 0, 1, 2]],
  ['float', [0.5, 1, 2, 1e-9]],
  ['nan', [1, NaN, 2, 3]],
  ['inf', [1, Infinity, -Infinity, 0]],
  ['nulls', [1, null, 2, undefined]],
];

describe('run directory tables', () => {
  it.each(COLUMNS.map((c) => [c[0], c] as const))('column %s: the same Arrow and CSV bytes as arquero', (_name, col) => {
    const want = arquero([col]);
    expect(Buffer.from(stepsArrow([col]))).toEqual(Buffer.from(want.arrow));
    expect(stepsCsv([col])).toBe(want.csv);
  });

  it('all columns together, from step rows', () => {
    const rows = [0, 1, 2, 3].map((i) => Object.fromEntries(COLUMNS.map(([n, v]) => [n, v[i]]))) as unknown as StepRow[];
    const cols = stepsColumns(rows);
    expect(cols.map(([n]) => n)).toEqual(COLUMNS.map(([n]) => n));
    const want = arquero(COLUMNS);
    expect(Buffer.from(stepsArrow(cols))).toEqual(Buffer.from(want.arrow));
    expect(stepsCsv(cols)).toBe(want.csv);
    expect(stepsCsv(cols).split('\n')[2]).toBe('127,0,-1,-32768,0,-2147483648,0,1,NaN,Infinity,');
  });

  it('no rows: no columns, as arquero writes them', () => {
    const cols = stepsColumns([]);
    expect(cols).toEqual([]);
    const want = arquero([]);
    expect(Buffer.from(stepsArrow(cols))).toEqual(Buffer.from(want.arrow));
    expect(stepsCsv(cols)).toBe(want.csv);
  });
});
