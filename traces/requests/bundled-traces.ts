/** The request traces shipped with kvtier (see data/mooncake/README.md for their provenance). */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type BundledTrace = 'conversation' | 'synthetic';
export const BUNDLED_TRACES: readonly BundledTrace[] = ['conversation', 'synthetic'];
/** The names `--requests` takes for the bundled traces. */
export const BUNDLED_TRACE_ARGS: readonly string[] = BUNDLED_TRACES.map((n) => `mooncake:${n}`);

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

/**
 * `mooncake:conversation` / `mooncake:synthetic` name a bundled trace; another `mooncake:NAME` is an
 * error listing the valid names (unless a file of that name exists); anything else is a path.
 */
export function resolveRequestsArg(arg: string): string {
  const m = /^mooncake:(.*)$/.exec(arg);
  if (!m) return arg;
  if ((BUNDLED_TRACES as readonly string[]).includes(m[1]!)) return bundledTracePath(m[1] as BundledTrace);
  if (existsSync(arg)) return arg;
  throw new Error(
    `${arg}: unknown bundled request trace "${m[1]}" (valid: ${BUNDLED_TRACE_ARGS.join(', ')}; or the path of a Mooncake .jsonl, Azure or BurstGPT .csv file)`,
  );
}
