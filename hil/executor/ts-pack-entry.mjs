// Piscina entry for the block-packing workers when kvtier runs from its TypeScript sources (tests,
// `tsx`): loads pack-worker.ts directly when the thread inherited a TypeScript loader, else through
// tsx's loader API (vitest transforms modules in its own process; threads get no loader). Runs from
// dist/ use the compiled pack-worker.js directly.
let loaded;

async function importTs(url) {
  try {
    return await import(url);
  } catch (e) {
    if (e?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw e;
  }
  const { tsImport } = await import('tsx/esm/api');
  return tsImport(url, import.meta.url);
}

export async function pack(task) {
  loaded ??= importTs(new URL('./pack-worker.ts', import.meta.url).href);
  return (await loaded).default(task);
}
