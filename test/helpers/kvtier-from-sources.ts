/**
 * The kvtier command line run from the TypeScript sources (the same code the tests import):
 * `node --import tsx test/helpers/kvtier-from-sources.ts ARGS...`. kvtierArgs() gives that argv;
 * snapshotSources() copies the code to a folder first, so that a test spanning several processes
 * runs one version of it however the tree changes meanwhile.
 */
import * as fs from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../cli/main.js';

export const KVTIER_FROM_SOURCES = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Arguments for spawn(process.execPath, ...) that run `kvtier ARGS...` from the sources. */
export function kvtierArgs(...args: string[]): string[] {
  return ['--import', 'tsx', KVTIER_FROM_SOURCES, ...args];
}

/** Arguments that run `kvtier ARGS...` from a snapshot made by snapshotSources(). */
export function kvtierSnapshotArgs(snapshot: string, ...args: string[]): string[] {
  return ['--import', 'tsx', join(snapshot, relative(ROOT, KVTIER_FROM_SOURCES)), ...args];
}

const CODE_DIRS = ['common', 'cli', 'sim', 'serving', 'studies', 'policies', 'traces', 'reports', 'hil', 'test/helpers'];
const SKIP_DIRS = new Set(['build', 'captured', 'node_modules']);

/** Copy the code (.ts, .mjs, .json; no data folders) and package.json to `dest`, with node_modules linked. */
export function snapshotSources(dest: string): string {
  fs.mkdirSync(dest, { recursive: true });
  for (const d of CODE_DIRS) {
    fs.cpSync(join(ROOT, d), join(dest, d), {
      recursive: true,
      filter: (src) => {
        const name = src.split('/').pop()!;
        if (fs.statSync(src).isDirectory()) return !SKIP_DIRS.has(name);
        return /\.(ts|mjs|json)$/.test(name);
      },
    });
  }
  fs.copyFileSync(join(ROOT, 'package.json'), join(dest, 'package.json'));
  fs.symlinkSync(join(ROOT, 'node_modules'), join(dest, 'node_modules'));
  return dest;
}

if (process.argv[1] === KVTIER_FROM_SOURCES || process.argv[1]?.endsWith('/test/helpers/kvtier-from-sources.ts')) process.exitCode = await main(process.argv);
