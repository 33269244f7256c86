/**
 * The tests that spawn `bin/kvtier.js` run the compiled dist/, the rest import the TypeScript
 * sources. Both must be the same code, so those tests call assertDistFresh() first: it fails when a
 * source file is newer than its compiled file (or dist/ is missing), naming the file and the fix.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SOURCE_DIRS = ['common', 'cli', 'sim', 'serving', 'studies', 'traces', 'policies', 'hil', 'reports'];

function* sources(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'build' && e.name !== 'node_modules' && e.name !== 'data') yield* sources(p);
    } else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') && !e.name.endsWith('.test.ts')) yield p;
  }
}

/** The first source file whose compiled .js in dist/ is missing or older, or null. */
export function staleCompiled(root = ROOT): { source: string; why: string } | null {
  try {
    statSync(join(root, 'dist', 'cli', 'main.js'));
  } catch {
    return { source: 'cli/main.ts', why: 'has no compiled dist/cli/main.js' };
  }
  for (const d of SOURCE_DIRS) {
    if (!existsSync(join(root, d))) continue;
    for (const src of sources(join(root, d))) {
      const rel = relative(root, src);
      const out = join(root, 'dist', rel.replace(/\.ts$/, '.js'));
      let outTime: number;
      try {
        outTime = statSync(out).mtimeMs;
      } catch {
        // a file outside the compiled program (a script run with tsx) has none; a new module of
        // the program is imported by a changed one, which the mtime check catches
        continue;
      }
      if (statSync(src).mtimeMs > outTime) return { source: rel, why: 'is newer than its compiled file in dist/' };
    }
  }
  return null;
}

export function assertDistFresh(): void {
  const stale = staleCompiled();
  if (stale) {
    throw new Error(`the compiled CLI is stale: ${stale.source} ${stale.why}. Run "npm run build" first (npm install does it), so that the tests of bin/kvtier.js run the code the other tests import.`);
  }
}
