/**
 * Golden test of the Python writer sketch in traces/FORMAT.md: run that very code block (when
 * python3 with numpy is available) and check that the TypeScript reader and validateTrace accept
 * its output, and that its records are byte-identical to TraceWriter's.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TraceHeader } from '../../traces/format.js';
import { openTrace } from '../../traces/trace-reader.js';
import { TraceWriter } from '../../traces/trace-writer.js';
import { validateTrace } from '../../traces/validate-trace.js';
import { header, tmpDir, variedSteps } from './raw-kvt.js';

const formatDoc = fs.readFileSync(new URL('../../traces/FORMAT.md', import.meta.url), 'utf8');
const sketch = /```python\n([\s\S]*?)```/.exec(formatDoc)?.[1];
const hasNumpy = spawnSync('python3', ['-c', 'import numpy'], { encoding: 'utf8' }).status === 0;

const DRIVER = `
import sys
spec = json.load(open(sys.argv[1]))
w = KvtWriter(sys.argv[2], spec['header'])
for rows in spec['steps']:
    w.write_step([(r['mass'], r['idx'], r['remainder'], r['normFrom'], r['norms']) for r in rows])
w.close()
`;

function recordsOf(file: string): Buffer {
  const b = fs.readFileSync(file);
  return b.subarray(20 + b.readUInt32LE(12));
}

describe('the Python writer in FORMAT.md', () => {
  it('is in the document', () => {
    expect(sketch).toContain('class KvtWriter');
  });

  it.skipIf(!hasNumpy)('writes files the TypeScript reader accepts, records byte-identical to TraceWriter (needs python3 + numpy)', () => {
    for (const over of [{}, { encoding: 'topk', topk: 4, kv_groups: 2, prompt_tokens: 30, steps: 5 }] as Partial<TraceHeader>[]) {
      const dir = tmpDir();
      const h = header(over);
      const steps = variedSteps(h);
      const spec = {
        header: h,
        steps: steps.map((s) =>
          s.layers.map((a) => ({
            mass: Array.from(a.mass),
            idx: a.idx === null ? null : Array.from(a.idx),
            remainder: a.remainder,
            normFrom: a.normFrom,
            norms: Array.from(a.norms),
          })),
        ),
      };
      fs.writeFileSync(path.join(dir, 'spec.json'), JSON.stringify(spec));
      fs.writeFileSync(path.join(dir, 'writer.py'), sketch + DRIVER);
      const py = path.join(dir, 'py.kvt');
      const run = spawnSync('python3', [path.join(dir, 'writer.py'), path.join(dir, 'spec.json'), py], { encoding: 'utf8' });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      expect(validateTrace(py)).toMatchObject({ ok: true, steps: h.steps });
      expect(openTrace(py).header).toEqual(h);
      const ts = path.join(dir, 'ts.kvt');
      const w = new TraceWriter(ts, h);
      for (const s of steps) w.writeStep(s);
      w.close();
      expect(recordsOf(py).equals(recordsOf(ts))).toBe(true);
    }
  });
});
