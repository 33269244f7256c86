import * as fs from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { finishOutDir } from '../../sim/output-dir.js';

const root = mkdtempSync(join(tmpdir(), 'kvtier-outdir-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function dirWith(name: string, file: string, text: string): string {
  const d = join(root, name);
  fs.mkdirSync(d, { recursive: true });
  fs.writeFileSync(join(d, file), text);
  return d;
}

describe('finishOutDir', () => {
  it('replaces an existing output only once the new one is in place, leaving nothing aside', () => {
    const out = dirWith('a', 'old.txt', 'old');
    const tmp = dirWith('.a.partial-1', 'new.txt', 'new');
    finishOutDir(tmp, out);
    expect(fs.readdirSync(out)).toEqual(['new.txt']);
    expect(fs.existsSync(tmp)).toBe(false);
    expect(fs.readdirSync(root).filter((n) => n.includes('replaced'))).toEqual([]);
  });

  it('puts the old output back when the new one cannot be moved in', () => {
    const out = dirWith('b', 'old.txt', 'old');
    expect(() => finishOutDir(join(root, 'no-such-partial'), out)).toThrow(/ENOENT/);
    expect(fs.readFileSync(join(out, 'old.txt'), 'utf8')).toBe('old');
    expect(fs.readdirSync(root).filter((n) => n.includes('replaced'))).toEqual([]);
  });

  it('moves a new output in where there was none', () => {
    const tmp = dirWith('.c.partial-1', 'new.txt', 'new');
    finishOutDir(tmp, join(root, 'c'));
    expect(fs.readFileSync(join(root, 'c', 'new.txt'), 'utf8')).toBe('new');
  });
});
