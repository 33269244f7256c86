/**
 * The kvtier command line run from the TypeScript sources (the same code the tests import):
 * `node --import tsx test/helpers/kvtier-from-sources.ts ARGS...`. kvtierArgs() gives that argv.
 */
import { fileURLToPath } from 'node:url';
import { main } from '../../cli/main.js';

export const KVTIER_FROM_SOURCES = fileURLToPath(import.meta.url);

/** Arguments for spawn(process.execPath, ...) that run `kvtier ARGS...` from the sources. */
export function kvtierArgs(...args: string[]): string[] {
  return ['--import', 'tsx', KVTIER_FROM_SOURCES, ...args];
}

if (process.argv[1] === KVTIER_FROM_SOURCES) process.exitCode = await main(process.argv);
