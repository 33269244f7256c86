/** The request traces shipped with kvtier (see data/mooncake/README.md for their provenance). */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type BundledTrace = 'conversation' | 'synthetic';

/**
 * Absolute path of a bundled Mooncake trace. The data lives beside these sources; compiled code in
 * dist/traces/requests/ finds it in the source tree.
 */
export function bundledTracePath(name: BundledTrace): string {
  const rel = `data/mooncake/${name}_trace.jsonl`;
  const candidates = [rel, `../../../traces/requests/${rel}`].map((p) => fileURLToPath(new URL(p, import.meta.url)));
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`bundled trace "${name}" not found (looked in ${candidates.join(', ')})`);
  return found;
}

/** `mooncake:conversation` / `mooncake:synthetic` name a bundled trace; anything else is a path. */
export function resolveRequestsArg(arg: string): string {
  const m = /^mooncake:(conversation|synthetic)$/.exec(arg);
  return m ? bundledTracePath(m[1] as BundledTrace) : arg;
}
