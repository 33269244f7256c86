// Piscina entry for sweep workers when kvtier runs from its TypeScript sources (tests, `tsx`):
// loads the same .ts worker modules the parent imports, so workers and parent always run the same
// code: directly when the thread inherited a TypeScript loader (the parent runs under `tsx`), else
// through tsx's loader API (vitest transforms modules in its own process; threads get no loader).
// Runs from dist/ use the compiled workers directly.

const MODULES = { sweep: './sweep-worker.ts', serve: './serve-sweep-worker.ts' };
const loaded = new Map();

function load(name) {
  let m = loaded.get(name);
  if (!m) {
    m = importTs(new URL(MODULES[name], import.meta.url).href);
    loaded.set(name, m);
  }
  return m;
}

async function importTs(url) {
  try {
    return await import(url);
  } catch (e) {
    if (e?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw e;
  }
  const { tsImport } = await import('tsx/esm/api');
  return tsImport(url, import.meta.url);
}

export async function sweep(task) {
  return (await load('sweep')).default(task);
}

export async function serve(task) {
  return (await load('serve')).default(task);
}
