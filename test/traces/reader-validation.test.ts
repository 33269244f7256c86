/**
 * One validation for every reader path: a value that `trace validate` (validateTrace) refuses is
 * refused, with the same message (file, byte, step, layer and group, field), by the streaming
 * reader that `run`, `sweep` and `hil run` replay through (simulate), by `trace stats`
 * (computeTraceStats), and by the writer's StepChecker. Bad files are made from a small generated
 * trace by changing one value and recomputing the record's checksum.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import seedrandom from 'seedrandom';
import { describe, expect, it } from 'vitest';
import { simulate } from '../../sim/run.js';
import { cloneStep } from '../../traces/clone-step.js';
import type { TraceStep } from '../../traces/format.js';
import { RowValueCheck } from '../../traces/row-values.js';
import { StepChecker } from '../../traces/step-check.js';
import { computeTraceStats } from '../../traces/trace-stats.js';
import { openTrace, readTraceHeader } from '../../traces/trace-reader.js';
import { validateTrace } from '../../traces/validate-trace.js';
import { patchRow, type RowField } from './patch-kvt.js';
import { smallTrace, tmpDir } from './raw-kvt.js';

const MODEL = 'test/fixtures/tiny-model.json';
const HW = 'test/fixtures/tiny-hardware.json';
const dir = tmpDir();

const TOPK = smallTrace(dir, 'good-topk.kvt', 'topk');
const DENSE = smallTrace(dir, 'good-dense.kvt', 'dense');

function goodSteps(file: string): TraceStep[] {
  const r = openTrace(file);
  try {
    // each step cloned as it is read: a step's arrays are views of the reader's buffer
    const steps: TraceStep[] = [];
    for (const s of r) steps.push(cloneStep(s));
    return steps;
  } finally {
    r.close();
  }
}
const TOPK_STEPS = goodSteps(TOPK.file);

let n = 0;
function write(bytes: Uint8Array): string {
  const file = path.join(dir, `bad-${n++}.kvt`);
  fs.writeFileSync(file, bytes);
  return file;
}

/** The message `f` throws (the test fails if it does not throw). */
function thrown(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected an error, none was thrown');
}

function readAll(file: string, chunkBytes?: number): number {
  const r = openTrace(file, { chunkBytes });
  try {
    let steps = 0;
    for (const _ of r) steps++;
    return steps;
  } finally {
    r.close();
  }
}

/** The error of every reader path, by name. */
function messages(file: string): Record<string, string> {
  return {
    validate: thrown(() => validateTrace(file)),
    reader: thrown(() => readAll(file)),
    'reader, 64-byte chunks': thrown(() => readAll(file, 64)),
    'simulate (run, sweep, hil run)': thrown(() => simulate({ trace: file, policy: 'h2o', model: MODEL, hardware: HW, hbm_budget: '50%' })),
    'trace stats': thrown(() => computeTraceStats(file)),
  };
}

function sameEverywhere(file: string, expected: string): void {
  const m = messages(file);
  for (const [path, msg] of Object.entries(m)) expect(msg, path).toBe(expected);
}

describe('every reader path refuses what trace validate refuses', () => {
  it('the generated trace is valid on every path (the bad files below differ from it in one value)', () => {
    expect(validateTrace(TOPK.file)).toMatchObject({ ok: true, steps: 6 });
    expect(readAll(TOPK.file, 64)).toBe(6);
    expect(simulate({ trace: TOPK.file, policy: 'h2o', model: MODEL, hardware: HW, hbm_budget: '50%' }).summary.steps).toBe(6);
    expect(computeTraceStats(TOPK.file).steps).toBe(6);
    const row = TOPK_STEPS[3]!.layers[3]!;
    expect(row.mass.length).toBe(6);
    expect(row.nBlocks).toBe(16);
    expect(row.remainder).toBeGreaterThan(0);
  });

  for (const [value, shown] of [
    [NaN, 'NaN'],
    [-0.5, '-0.5'],
    [5.0, '5'],
  ] as const) {
    it(`a remainder of ${shown} (checksum recomputed): step, byte, layer, group and field named on every path`, () => {
      const { bytes, place } = patchRow(TOPK.bytes, 3, 3, 'remainder', value);
      const file = write(bytes);
      sameEverywhere(file, `${file}: record for step 3 at byte ${place.recordAt}: layer 1 group 1: field 'remainder': expected a finite number in [0, 1], got ${shown}`);
    });
  }

  it('mass, idx and norms values and the row sum, by hand', () => {
    const cases: [RowField, number, number, (n: number) => string][] = [
      ['mass', 2, NaN, () => `field 'mass[2]': expected a finite number in [0, 1], got NaN`],
      ['mass', 0, -0.25, () => `field 'mass[0]': expected a finite number in [0, 1], got -0.25`],
      ['idx', 4, 16, (nb) => `field 'idx[4]': expected a block index < nBlocks (${nb}), got 16`],
      ['norms', 0, -1, () => `field 'norms[0]': expected a finite number >= 0, got -1`],
      ['norms', 0, Infinity, () => `field 'norms[0]': expected a finite number >= 0, got Infinity`],
    ];
    for (const [field, i, value, what] of cases) {
      const { bytes, place } = patchRow(TOPK.bytes, 2, 1, field, value, i);
      const file = write(bytes);
      sameEverywhere(file, `${file}: record for step 2 at byte ${place.recordAt}: layer 0 group 1: ${what(place.nBlocks)}`);
    }
    // a duplicate index: idx[1] := idx[0]
    const dupOf = TOPK_STEPS[4]!.layers[2]!.idx![0]!;
    const dup = patchRow(TOPK.bytes, 4, 2, 'idx', dupOf, 1);
    const file = write(dup.bytes);
    sameEverywhere(file, `${file}: record for step 4 at byte ${dup.place.recordAt}: layer 1 group 0: field 'idx[1]': block ${dupOf} is listed twice (indices must be unique)`);
    // in range but the row no longer sums to 1: remainder + 0.25 (0.25 is exact in f32)
    const r = TOPK_STEPS[5]!.layers[0]!;
    const listed = r.mass.reduce((a, x) => a + x, 0);
    const off = patchRow(TOPK.bytes, 5, 0, 'remainder', r.remainder + 0.25);
    const offFile = write(off.bytes);
    const sum = listed + Math.fround(r.remainder + 0.25);
    sameEverywhere(offFile, `${offFile}: record for step 5 at byte ${off.place.recordAt}: layer 0 group 0: field 'mass': listed mass + remainder is ${sum}, expected 1 (within 0.001)`);
  });

  it('a dense trace with a non-zero remainder', () => {
    const { bytes, place } = patchRow(DENSE.bytes, 0, 2, 'remainder', 0.5);
    const file = write(bytes);
    sameEverywhere(file, `${file}: record for step 0 at byte ${place.recordAt}: layer 1 group 0: field 'remainder': expected 0 in a dense trace, got 0.5`);
  });

  it('random one-value changes: every path and the writer refuse or accept together, with one message', () => {
    const rng = seedrandom('reader-validation');
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
    const h = readTraceHeader(TOPK.file);
    let refused = 0;
    let accepted = 0;
    for (let trial = 0; trial < 120; trial++) {
      const s = Math.floor(rng() * 6);
      const row = Math.floor(rng() * 4);
      const good = TOPK_STEPS[s]!.layers[row]!;
      const field = pick(['remainder', 'idx', 'mass', 'norms'] as const);
      const len = field === 'remainder' ? 1 : field === 'norms' ? good.norms.length : good.mass.length;
      const i = Math.floor(rng() * len);
      const current = field === 'remainder' ? good.remainder : field === 'idx' ? good.idx![i]! : field === 'mass' ? good.mass[i]! : good.norms[i]!;
      const value =
        field === 'idx'
          ? pick([good.nBlocks, good.nBlocks + 7, 0xffffffff, good.idx![(i + 1) % len]!, current])
          : pick([NaN, Infinity, -Infinity, -0.5, -1e-6, 1.5, 5, current + 0.01, current + 1e-5, current]);
      const { bytes, place } = patchRow(TOPK.bytes, s, row, field, value, i);
      const file = write(bytes);
      // the writer's checks on the same step as an object
      const step = cloneStep(TOPK_STEPS[s]!);
      const a = step.layers[row]!;
      if (field === 'remainder') a.remainder = Math.fround(value);
      else if (field === 'idx') a.idx![i] = value;
      else if (field === 'mass') a.mass[i] = value;
      else a.norms[i] = value;
      const where = `${file}: record for step ${s} at byte ${place.recordAt}`;
      let writer: string | null = null;
      try {
        new StepChecker(h).check(step, s, where);
      } catch (e) {
        writer = (e as Error).message;
      }
      if (writer === null) {
        accepted++;
        expect(validateTrace(file).steps, `${field}[${i}] = ${value}`).toBe(6);
        expect(readAll(file, 64)).toBe(6);
        expect(computeTraceStats(file).steps).toBe(6);
      } else {
        refused++;
        expect(writer.startsWith(`${where}: layer ${Math.floor(row / 2)} group ${row % 2}: field '`), writer).toBe(true);
        sameEverywhere(file, writer);
      }
    }
    // both outcomes occur (the unchanged and 1e-5 values are valid)
    expect(refused).toBeGreaterThan(60);
    expect(accepted).toBeGreaterThan(5);
  });
});

describe('the reader options and the files it cannot open', () => {
  it('honours massTolerance like the writer, and names the valid range of a bad one', () => {
    const r = TOPK_STEPS[1]!.layers[1]!;
    const { bytes, place } = patchRow(TOPK.bytes, 1, 1, 'remainder', r.remainder + 0.005);
    const file = write(bytes);
    expect(thrown(() => readAll(file))).toMatch(
      new RegExp(`^${file}: record for step 1 at byte ${place.recordAt}: layer 0 group 1: field 'mass': listed mass \\+ remainder is 1\\.00\\d+, expected 1 \\(within 0\\.001\\)$`),
    );
    expect(validateTrace(file, { massTolerance: 0.01 }).steps).toBe(6);
    const loose = openTrace(file, { massTolerance: 0.01 });
    expect([...loose]).toHaveLength(6);
    loose.close();
    expect(() => openTrace(file, { massTolerance: 1 })).toThrow('massTolerance: expected a number in [0, 1), got 1');
    expect(() => openTrace(file, { massTolerance: -0.1 })).toThrow('massTolerance: expected a number in [0, 1), got -0.1');
  });

  it('names the path of a directory or a missing file (no bare EISDIR / ENOENT)', () => {
    const missing = path.join(dir, 'missing.kvt');
    for (const f of [() => openTrace(dir), () => readTraceHeader(dir), () => validateTrace(dir), () => computeTraceStats(dir)]) {
      expect(thrown(f)).toBe(`${dir}: cannot read the attention trace: it is a directory (expected a .kvt attention trace file)`);
    }
    for (const f of [() => openTrace(missing), () => readTraceHeader(missing), () => simulate({ trace: missing, policy: 'h2o', model: MODEL, hardware: HW, hbm_budget: '20%' })]) {
      expect(thrown(f)).toBe(`${missing}: cannot read the attention trace: no such file (expected a .kvt attention trace file)`);
    }
  });
});

describe('RowValueCheck entry by entry (the loops take four entries at a time)', () => {
  const W = 'f.kvt: record for step 0 at byte 20';
  /** n listed blocks 0..n-1 of nBlocks n + 3, equal masses, the rest as remainder */
  function row(n: number) {
    const nBlocks = n + 3;
    const m = 1 / nBlocks;
    return { idx: Uint32Array.from({ length: n }, (_, i) => i), mass: new Float32Array(n).fill(m), remainder: 1 - n * Math.fround(m), nBlocks };
  }
  const msg = (f: () => void): string => thrown(f);

  it('names the first bad mass or index at every position of rows of 1 to 11 entries, topk and dense', () => {
    for (let n = 1; n <= 11; n++) {
      const topk = new RowValueCheck(1, false, 1e-3);
      const dense = new RowValueCheck(2, true, 1e-3);
      for (let i = 0; i < n; i++) {
        const r = row(n);
        r.mass[i] = NaN;
        if (i + 1 < n) r.mass[n - 1] = -1; // a later bad entry is not the one named
        expect(msg(() => topk.check(r.idx, r.mass, r.remainder, new Float32Array(0), r.nBlocks, W, 0))).toBe(
          `${W}: layer 0: field 'mass[${i}]': expected a finite number in [0, 1], got NaN`,
        );
        const d = new Float32Array(n).fill(1 / n);
        d[i] = 1.5;
        expect(msg(() => dense.check(null, d, 0, new Float32Array(0), n, W, 3))).toBe(`${W}: layer 1 group 1: field 'mass[${i}]': expected a finite number in [0, 1], got 1.5`);
        const far = row(n);
        far.idx[i] = far.nBlocks + i;
        expect(msg(() => topk.check(far.idx, far.mass, far.remainder, new Float32Array(0), far.nBlocks, W, 0))).toBe(
          `${W}: layer 0: field 'idx[${i}]': expected a block index < nBlocks (${far.nBlocks}), got ${far.nBlocks + i}`,
        );
      }
    }
  });

  it('finds a repeated index at every pair of positions, and accepts unique indices in any order', () => {
    const c = new RowValueCheck(1, false, 1e-3);
    for (let n = 2; n <= 11; n++) {
      for (let j = 0; j < n; j++) {
        for (let i = j + 1; i < n; i++) {
          const r = row(n);
          r.idx[i] = r.idx[j]!;
          expect(msg(() => c.check(r.idx, r.mass, r.remainder, new Float32Array(0), r.nBlocks, W, 0))).toBe(
            `${W}: layer 0: field 'idx[${i}]': block ${j} is listed twice (indices must be unique)`,
          );
        }
      }
      const r = row(n);
      r.idx.reverse();
      c.check(r.idx, r.mass, r.remainder, new Float32Array(0), r.nBlocks, W, 0);
      const rot = row(n);
      rot.idx.set(Uint32Array.from({ length: n }, (_, i) => (i + 1) % n));
      c.check(rot.idx, rot.mass, rot.remainder, new Float32Array(0), rot.nBlocks, W, 0);
    }
  });

  it('sums every entry: a row short by one entry\'s mass is refused, one within the tolerance accepted', () => {
    const c = new RowValueCheck(1, true, 1e-3);
    for (let n = 1; n <= 11; n++) {
      for (let i = 0; i < n; i++) {
        const d = new Float32Array(n).fill(1 / n);
        d[i] = 0;
        expect(msg(() => c.check(null, d, 0, new Float32Array(0), n, W, 0))).toMatch(new RegExp(`^${W}: layer 0: field 'mass': listed mass \\+ remainder is 0(\\.\\d+)?, expected 1 \\(within 0\\.001\\)$`));
        d[i] = 1 / n - 5e-4;
        c.check(null, d, 0, new Float32Array(0), n, W, 0);
      }
    }
  });
});
