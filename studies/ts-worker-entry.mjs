// Piscina entry for sweep workers when kvtier runs from its TypeScript sources (tests, `tsx`):
// loads the same .ts worker modules the parent imports, so workers and parent always run the same
// code: directly when the thread inherited a TypeScript loader (the parent runs under `tsx`), else
// through tsx's loader API (vitest transforms modules in its own process; threads get no loader).
// Runs from dist/ use the compiled workers directly.
import { importTs } from '../common/ts-import.mjs';

const MODULES = { sweep: './sweep-worker.ts', serve: './serve-sweep-worker.ts' };
const loaded = new Map();

function load(name) {
  let m = loaded.get(name);
  if (!m) {
    m = importTs(new URL(MODULES[name], import.meta.url).href, import.meta.url);
    loaded.set(name, m);
  }
  return m;
}

export async function sweep(task) {
  return (await load('sweep')).default(task);
}

export async function serve(task) {
  return (await load('serve')).default(task);
}
