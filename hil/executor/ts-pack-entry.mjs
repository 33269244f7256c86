// Piscina entry for the block-packing workers when kvtier runs from its TypeScript sources (tests,
// `tsx`); runs from dist/ use the compiled pack-worker.js directly.
import { importTs } from '../../common/ts-import.mjs';

let loaded;

export async function pack(task) {
  loaded ??= importTs(new URL('./pack-worker.ts', import.meta.url).href, import.meta.url);
  return (await loaded).default(task);
}
