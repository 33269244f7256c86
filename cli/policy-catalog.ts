/**
 * The registered policies as `kvtier policies` lists them, kept in policies/catalog.json so that the
 * command answers without loading the policies' code. `npm run docs` writes the file from the
 * registry (policyCatalogText), with a digest of the policies' sources (policies/*.ts); the command
 * reads it only while that digest holds (a policy added or changed since: the registry is loaded),
 * and test/cli/policy-catalog.test.ts fails when the file differs from the registry.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PolicyDefinition } from '../policies/policy.js';

/** policies/catalog.json of this checkout (the same path from cli/ and from dist/cli/) */
export const POLICY_CATALOG_FILE = fileURLToPath(new URL(import.meta.url.includes('/dist/cli/') ? '../../policies/catalog.json' : '../policies/catalog.json', import.meta.url));

export type CatalogEntry = Omit<PolicyDefinition<any>, 'create'>;

/** the catalog from the definitions: each without its create function, as `kvtier policies --json` prints them */
export function catalogOf(defs: readonly PolicyDefinition<any>[]): CatalogEntry[] {
  return defs.map(({ create: _c, ...d }) => d);
}

/** sha256 over the names and contents of the .ts files in `dir` (in name order); undefined where they cannot be read */
export function sourcesDigest(dir: string): string | undefined {
  try {
    const h = createHash('sha256');
    for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.ts')).sort()) h.update(`${f}\0`).update(fs.readFileSync(join(dir, f))).update('\0');
    return h.digest('hex');
  } catch {
    return undefined;
  }
}

/** the catalog file's text for the definitions, the policies' sources in `sourceDir` at their digest */
export function policyCatalogText(defs: readonly PolicyDefinition<any>[], sourceDir = dirname(POLICY_CATALOG_FILE)): string {
  return `${JSON.stringify({ sources_sha256: sourcesDigest(sourceDir) ?? null, policies: catalogOf(defs) }, null, 2)}\n`;
}

/**
 * The catalog file's entries, or undefined where it cannot be read as a list of named policies or
 * its digest differs from that of the .ts files beside it.
 */
export function readPolicyCatalog(file = POLICY_CATALOG_FILE): CatalogEntry[] | undefined {
  try {
    const x = JSON.parse(fs.readFileSync(file, 'utf8')) as { sources_sha256?: unknown; policies?: unknown };
    const list = x?.policies;
    if (!Array.isArray(list) || !list.every((d) => d && typeof d.name === 'string' && Array.isArray(d.options))) return undefined;
    if (typeof x.sources_sha256 !== 'string' || x.sources_sha256 !== sourcesDigest(dirname(file))) return undefined;
    return list as CatalogEntry[];
  } catch {
    return undefined;
  }
}

/** the text listing of `kvtier policies` */
export function formatPolicyList(defs: readonly CatalogEntry[]): string {
  const lines: string[] = [];
  for (const d of defs) {
    lines.push(`${d.name}${d.oracle ? '  [ORACLE: reads the future; a bound, not deployable]' : ''}`);
    lines.push(`  ${d.description}`);
    lines.push(`  source: ${d.source}`);
    for (const opt of d.options) lines.push(`  --opt ${opt.name}=<${opt.choices ? opt.choices.join('|') : opt.type}>  (default ${JSON.stringify(opt.default)}) ${opt.description}`);
  }
  return lines.join('\n');
}
