// Imports a module by URL from a worker thread when kvtier runs from its TypeScript sources: directly
// when the thread inherited a TypeScript loader (the parent runs under `tsx`), else through tsx's
// loader API (vitest transforms modules in its own process; threads get no loader).

export async function importTs(url, parentUrl) {
  try {
    return await import(url);
  } catch (e) {
    if (e?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw e;
  }
  const { tsImport } = await import('tsx/esm/api');
  return tsImport(url, parentUrl);
}
