/**
 * Which build of kvtier is running, for outputs that must say what produced them (a validation run on
 * a GPU machine, say): the package version and the git commit. The commit comes from `build.json`
 * at the root of the compiled tree (written where a build is carried to a machine without git, e.g.
 * perf/device/bundle.sh), else from `git` in the package's checkout (`+dirty` when tracked files
 * differ from it), else "unknown".
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BuildIdentity {
  version: string;
  commit: string;
}

/** the compiled tree's root (dist/; the source tree itself when run from TypeScript) and the package's root */
const TREE = join(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGE = existsSync(join(TREE, 'package.json')) ? TREE : join(TREE, '..');

function readJson(path: string): Record<string, unknown> | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function gitCommit(dir: string): string | null {
  if (!existsSync(join(dir, '.git'))) return null;
  try {
    const run = (args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim();
    const head = run(['rev-parse', '--short=7', 'HEAD']);
    const dirty = run(['status', '--porcelain', '--untracked-files=no']) !== '';
    return dirty ? `${head}+dirty` : head;
  } catch {
    return null;
  }
}

/** the build identity of the tree at `tree` (default: this module's), its package at `pkg` */
export function buildIdentity(tree = TREE, pkg = PACKAGE): BuildIdentity {
  const written = readJson(join(tree, 'build.json'));
  const version = typeof written?.version === 'string' ? written.version : String(readJson(join(pkg, 'package.json'))?.version ?? 'unknown');
  const commit = typeof written?.commit === 'string' ? written.commit : (gitCommit(pkg) ?? 'unknown');
  return { version, commit };
}
