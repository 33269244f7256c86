/**
 * The registered policies as `kvtier policies` lists them, kept in policies/catalog.json so that the
 * command answers without loading the policies' code, and the module each built-in policy is defined
 * in, so that `kvtier run` loads only the one it runs. `npm run docs` writes the file from the
 * registry (policyCatalogText), with a digest of the policies' sources (policies/*.ts); it is read
 * only while that digest holds (a policy added or changed since: the registry is loaded), and
 * test/cli/policy-catalog.test.ts fails when the file differs from the registry.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
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

/**
 * For each definition, the module of policies/ that exports it (its base name; the first in name
 * order where several do), by importing them all. Definitions no module there exports are left out.
 */
export async function policyModules(defs: readonly PolicyDefinition<any>[], sourceDir = dirname(POLICY_CATALOG_FILE)): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const wanted = new Set<unknown>(defs);
  for (const f of fs.readdirSync(sourceDir).filter((x) => x.endsWith('.ts')).sort()) {
    const base = f.slice(0, -3);
    const m = (await import(pathToFileURL(join(sourceDir, f)).href)) as Record<string, unknown>;
    for (const v of Object.values(m)) if (wanted.has(v) && !((v as PolicyDefinition<any>).name in out)) out[(v as PolicyDefinition<any>).name] = base;
  }
  return out;
}

/** the catalog file's text for the definitions and their modules, the policies' sources in `sourceDir` at their digest */
export function policyCatalogText(defs: readonly PolicyDefinition<any>[], modules: Record<string, string>, sourceDir = dirname(POLICY_CATALOG_FILE)): string {
  return `${JSON.stringify({ sources_sha256: sourcesDigest(sourceDir) ?? null, modules, policies: catalogOf(defs) }, null, 2)}\n`;
}

interface CatalogFile {
  modules: Record<string, string>;
  policies: CatalogEntry[];
}

/** the catalog file, or undefined where it is malformed or its digest differs from that of the .ts files beside it */
function readCatalogFile(file: string): CatalogFile | undefined {
  try {
    const x = JSON.parse(fs.readFileSync(file, 'utf8')) as { sources_sha256?: unknown; modules?: unknown; policies?: unknown };
    const list = x?.policies;
    if (!Array.isArray(list) || !list.every((d) => d && typeof d.name === 'string' && Array.isArray(d.options))) return undefined;
    const modules = x.modules ?? {};
    if (typeof modules !== 'object' || Array.isArray(modules) || !Object.values(modules as object).every((m) => typeof m === 'string' && /^[a-z0-9-]+$/.test(m))) return undefined;
    if (typeof x.sources_sha256 !== 'string' || x.sources_sha256 !== sourcesDigest(dirname(file))) return undefined;
    return { modules: modules as Record<string, string>, policies: list as CatalogEntry[] };
  } catch {
    return undefined;
  }
}

/**
 * The catalog file's entries, or undefined where it cannot be read as a list of named policies or
 * its digest differs from that of the .ts files beside it.
 */
export function readPolicyCatalog(file = POLICY_CATALOG_FILE): CatalogEntry[] | undefined {
  return readCatalogFile(file)?.policies;
}

/** the base name of the module of policies/ that defines policy `name`, where the catalog file holds and names one */
export function policyModuleOf(name: string, file = POLICY_CATALOG_FILE): string | undefined {
  const m = readCatalogFile(file)?.modules;
  return m && Object.hasOwn(m, name) ? m[name] : undefined;
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
