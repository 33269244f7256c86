// Which build is running (common/build-identity.ts): a build.json carried with the compiled tree, else
// git in the package's checkout, else "unknown"; the version from build.json or package.json.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIdentity } from '../../common/build-identity.js';

const dir = mkdtempSync(join(tmpdir(), 'kvtier-build-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('build identity', () => {
  it('reads build.json where a build was carried without git', () => {
    const tree = join(dir, 'carried', 'dist');
    mkdirSync(tree, { recursive: true });
    writeFileSync(join(tree, 'build.json'), JSON.stringify({ version: '0.1.0', commit: 'abc1234+dirty' }));
    writeFileSync(join(dir, 'carried', 'package.json'), '{"type":"module"}');
    expect(buildIdentity(tree, join(dir, 'carried'))).toEqual({ version: '0.1.0', commit: 'abc1234+dirty' });
  });

  it('says "unknown" without build.json or a checkout, the version from package.json', () => {
    const pkg = join(dir, 'plain');
    mkdirSync(join(pkg, 'dist'), { recursive: true });
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ version: '9.8.7' }));
    expect(buildIdentity(join(pkg, 'dist'), pkg)).toEqual({ version: '9.8.7', commit: 'unknown' });
    expect(buildIdentity(join(dir, 'nowhere'), join(dir, 'nowhere'))).toEqual({ version: 'unknown', commit: 'unknown' });
  });

  // (a copy of the tree without its .git has no HEAD to compare with)
  it.skipIf(!existsSync('.git'))('is this checkout\'s HEAD, marked dirty when tracked files differ', () => {
    const head = execFileSync('git', ['rev-parse', '--short=7', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() !== '';
    const id = buildIdentity();
    expect(id.commit).toBe(dirty ? `${head}+dirty` : head);
    expect(id.version).toMatch(/^\d+\.\d+\.\d+/);
  });
});
