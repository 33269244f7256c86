import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { staleCompiled } from '../helpers/dist-fresh.js';

const root = mkdtempSync(join(tmpdir(), 'kvtier-dist-fresh-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function file(rel: string, secondsAgo: number): void {
  const p = join(root, rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, '');
  const t = Date.now() / 1000 - secondsAgo;
  utimesSync(p, t, t);
}

describe('the compiled CLI is checked against the sources', () => {
  it('names a missing dist/, a source newer than its compiled file, and passes a fresh build', () => {
    for (const d of ['cli', 'sim', 'traces', 'policies', 'hil', 'reports']) mkdirSync(join(root, d), { recursive: true });
    file('cli/main.ts', 100);
    expect(staleCompiled(root)).toEqual({ source: 'cli/main.ts', why: 'has no compiled dist/cli/main.js' });
    file('dist/cli/main.js', 50);
    file('sim/engine.ts', 100);
    file('dist/sim/engine.js', 50);
    expect(staleCompiled(root)).toBeNull();
    file('sim/engine.ts', 10);
    expect(staleCompiled(root)).toEqual({ source: 'sim/engine.ts', why: 'is newer than its compiled file in dist/' });
    file('dist/sim/engine.js', 5);
    // a script outside the compiled program has no compiled file and is not the CLI's code
    file('reports/script-run-with-tsx.ts', 1);
    expect(staleCompiled(root)).toBeNull();
  });
});
