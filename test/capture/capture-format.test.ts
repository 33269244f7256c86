/**
 * Round trip of the capture tool's writer (traces/capture/kvt_writer.py): rows written from Python
 * come back from the TypeScript reader with the same values, validateTrace accepts the file, and
 * the writer refuses rows that break the format's rules. Needs python3 with numpy (skips otherwise).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTrace } from '../../traces/trace-reader.js';
import { cloneStep } from '../../traces/clone-step.js';
import { validateTrace } from '../../traces/validate-trace.js';
import { CAPTURE_DIR, PY_NUMPY, runPy, tmpDir } from './python-env.js';

const WRITE = `
import json, sys
sys.path.insert(0, ${JSON.stringify(CAPTURE_DIR)})
from kvt_writer import KvtWriter
spec = json.load(sys.stdin)
w = KvtWriter(spec['path'], spec['header'])
try:
    for rows in spec['steps']:
        w.write_step([(r['mass'], r.get('idx'), r['remainder'], r['normFrom'], r['norms']) for r in rows])
    w.close()
except ValueError as e:
    w.abort()
    print('refused:', e)
`;

// 2 layers x 2 groups, block 4, prompt 6: 7 and 8 tokens => 2 blocks at both steps
const dense = {
  header: { model: 'hand', layers: 2, block_size: 4, prompt_tokens: 6, steps: 2, kv_groups: 2, encoding: 'dense', provenance: { source: 'test' } },
  steps: [
    [
      { mass: [0.75, 0.25], remainder: 0, normFrom: 0, norms: [1.5, 2] },
      { mass: [0.5, 0.5], remainder: 0, normFrom: 0, norms: [3, 4] },
      { mass: [0, 1], remainder: 0, normFrom: 0, norms: [5, 6] },
      { mass: [0.125, 0.875], remainder: 0, normFrom: 0, norms: [7, 8] },
    ],
    [
      { mass: [0.625, 0.375], remainder: 0, normFrom: 1, norms: [2.5] },
      { mass: [0.5, 0.5], remainder: 0, normFrom: 1, norms: [4.5] },
      { mass: [0.25, 0.75], remainder: 0, normFrom: 1, norms: [6.5] },
      { mass: [1, 0], remainder: 0, normFrom: 1, norms: [8.5] },
    ],
  ],
};

// 1 layer, topk 2, block 1, prompt 4: 5 then 6 blocks
const topk = {
  header: { model: 'hand', layers: 1, block_size: 1, prompt_tokens: 4, steps: 2, kv_groups: 1, encoding: 'topk', topk: 2, provenance: { source: 'test' } },
  steps: [
    [{ mass: [0.5, 0.25], idx: [1, 4], remainder: 0.25, normFrom: 0, norms: [1, 2, 3, 4, 5] }],
    [{ mass: [0.5, 0.125], idx: [0, 5], remainder: 0.375, normFrom: 5, norms: [6] }],
  ],
};

describe.skipIf(PY_NUMPY === null)('traces/capture/kvt_writer.py (needs python3 + numpy)', () => {
  for (const [name, spec] of Object.entries({ dense, topk })) {
    it(`${name}: what Python writes, the TypeScript reader reads back`, () => {
      const file = path.join(tmpDir(), `${name}.kvt`);
      expect(runPy(PY_NUMPY!, ['-c', WRITE], { input: JSON.stringify({ ...spec, path: file }) })).toBe('');
      expect(validateTrace(file).ok).toBe(true);
      const r = openTrace(file);
      expect(r.header.model).toBe('hand');
      expect(r.header.encoding).toBe(spec.header.encoding);
      const steps = [...r].map(cloneStep);
      r.close();
      expect(steps.length).toBe(2);
      steps.forEach((s, i) => {
        expect(s.step).toBe(i);
        expect(s.contextTokens).toBe(spec.header.prompt_tokens + i + 1);
        s.layers.forEach((row, j) => {
          const want = spec.steps[i]![j]! as { mass: number[]; idx?: number[]; remainder: number; normFrom: number; norms: number[] };
          expect(Array.from(row.mass)).toEqual(want.mass);
          expect(row.idx === null ? null : Array.from(row.idx)).toEqual(want.idx ?? null);
          expect(row.remainder).toBe(want.remainder);
          expect(row.normFrom).toBe(want.normFrom);
          expect(Array.from(row.norms)).toEqual(want.norms);
        });
      });
    });
  }

  it('refuses masses that do not sum to 1, and leaves no file behind', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'bad.kvt');
    const bad = structuredClone(dense);
    bad.steps[1]![2]!.mass = [0.5, 0.25];
    expect(runPy(PY_NUMPY!, ['-c', WRITE], { input: JSON.stringify({ ...bad, path: file }) })).toMatch(/refused: step 1 row 2: masses must .* sum to 1/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
