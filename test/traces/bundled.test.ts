import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLED_TRACES } from '../../traces/bundled-traces.js';
import { generateTrace } from '../../traces/generator.js';
import { validateTrace } from '../../traces/validate-trace.js';
import { tmpDir } from './raw-kvt.js';

const bundledDir = new URL('../../traces/bundled/', import.meta.url);

describe('bundled quickstart traces', () => {
  it('are small (< 2 MB together) and valid', () => {
    let total = 0;
    for (const t of BUNDLED_TRACES) {
      const file = new URL(t.file, bundledDir).pathname;
      const v = validateTrace(file);
      expect(v.header.model).toBe('llama-3-8b');
      expect(v.steps).toBe(t.input.steps);
      total += v.bytes;
    }
    expect(total).toBeLessThan(2e6);
  });

  it('are exactly what make-bundled.ts generates (regenerate with npx tsx traces/make-bundled.ts)', () => {
    const dir = tmpDir();
    for (const t of BUNDLED_TRACES) {
      const fresh = path.join(dir, t.file);
      generateTrace(fresh, t.input);
      const shipped = fs.readFileSync(new URL(t.file, bundledDir));
      expect(fs.readFileSync(fresh).equals(shipped), t.file).toBe(true);
    }
  });
});
