/**
 * The suite's test files share their worker's modules unless vitest.config.ts lists them in ISOLATED.
 * A file that changes state other files could see must be listed: here, any test file (or helper it
 * imports) that patches a prototype, mocks or spies, registers a policy, hardware or model, replaces a
 * process stream, sets an environment variable or global, changes directory or redefines a property.
 */
import * as fs from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ISOLATED } from '../vitest.config.js';

const ROOT = join(import.meta.dirname, '..');
const CHANGES_SHARED_STATE =
  /prototype\.[A-Za-z_$]+ *=[^=]|vi\.mock\(|vi\.spyOn|vi\.stubGlobal|vi\.stubEnv|process\.(stdout|stderr)\.write *=[^=]|register(Policy|Hardware|Model)\(|globalThis\.[A-Za-z_$]+ *=[^=]|process\.env\.[A-Za-z_]+ *=[^=]|process\.env\[[^\]]+\] *=[^=]|delete process\.env|process\.chdir|Object\.defineProperty\(/;

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** the test helpers (test/ files other than *.test.ts and fixtures) a file imports, by relative path */
function helpersOf(file: string, text: string): string[] {
  return [...text.matchAll(/from '(\.[^']+)\.js'/g)].map((m) => join(file, '..', `${m[1]}.ts`)).filter((p) => p.startsWith(join(ROOT, 'test')) && !p.endsWith('.test.ts') && fs.existsSync(p));
}

describe('test isolation', () => {
  const all = files(join(ROOT, 'test')).filter((f) => !f.includes(`${join('test', 'fixtures')}`));
  const tests = all.filter((f) => f.endsWith('.test.ts'));

  it('every test file that changes shared state runs isolated', () => {
    const changes = (f: string): boolean => {
      const text = fs.readFileSync(f, 'utf8');
      return CHANGES_SHARED_STATE.test(text) || helpersOf(f, text).some((h) => CHANGES_SHARED_STATE.test(fs.readFileSync(h, 'utf8')));
    };
    const shared = tests.filter((f) => f !== join(ROOT, 'test', 'suite-isolation.test.ts') && changes(f)).map((f) => relative(ROOT, f).split('\\').join('/'));
    expect(shared.filter((f) => !ISOLATED.includes(f))).toEqual([]);
  });

  it('every file ISOLATED names exists', () => {
    for (const f of ISOLATED) expect(fs.existsSync(join(ROOT, f)), f).toBe(true);
  });
});
