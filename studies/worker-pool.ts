/**
 * The piscina pool that runs sweep configurations. Workers run the same code as the parent: the
 * compiled workers next to this file when it runs from dist/, and the TypeScript workers (loaded
 * through tsx by ts-worker-entry.mjs) when it runs from the sources.
 */
import * as fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';

export type WorkerKind = 'sweep' | 'serve';

const COMPILED: Record<WorkerKind, string> = { sweep: './sweep-worker.js', serve: './serve-sweep-worker.js' };

/** The worker file and handler name for this module's own code (exported for tests). */
export function workerEntry(kind: WorkerKind, moduleUrl = import.meta.url): { filename: string; name: string } {
  if (moduleUrl.endsWith('.ts')) return { filename: fileURLToPath(new URL('./ts-worker-entry.mjs', moduleUrl)), name: kind };
  const filename = fileURLToPath(new URL(COMPILED[kind], moduleUrl));
  if (!fs.existsSync(filename)) throw new Error(`sweep worker ${filename} is missing; run "npm run build"`);
  return { filename, name: 'default' };
}

export function sweepPool(kind: WorkerKind, threads: number): Piscina {
  return new Piscina({ ...workerEntry(kind), maxThreads: threads, minThreads: threads });
}
