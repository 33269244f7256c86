/**
 * The generated parts of docs/*.md, written from the code so that the pages cannot drift from it:
 * the CLI's help (the commander program of cli/), the policy registry with its options, the hardware
 * and model presets, the sweep-file fields, the serving options and the HIL attention options (from
 * the native addon's table, when the addon loads).
 *
 * A page holds a generated section between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`.
 * `npm run docs` (npx tsx docs/generate.ts) rewrites every section of every page in docs/ (and
 * policies/catalog.json: the policy list `kvtier policies` prints, and the module `kvtier run` loads
 * for each policy);
 * `npx tsx docs/generate.ts --check` only says which sections differ (exit 1 if any). Each section's
 * generator is a file in docs/sections/.
 * test/docs/docs-fresh.test.ts fails when a section differs from what this file gives now.
 */
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { POLICY_CATALOG_FILE, policyCatalogText, policyModules } from '../cli/policy-catalog.js';
import { registerBuiltinPolicies } from '../policies/builtin.js';
import { listPolicies } from '../policies/registry.js';
import { cliSection } from './sections/cli-help.js';
import { generatorSection } from './sections/generator-params.js';
import { hardwarePresetsSection, modelPresetsSection, profileFieldsSection } from './sections/hardware.js';
import { hilOptionsSection } from './sections/hil-options.js';
import { policiesSection } from './sections/policy-list.js';
import { summarySection } from './sections/run-summary.js';
import { serveSweepFieldsSection, servingOptionsSection, sweepFieldsSection } from './sections/sweep-fields.js';

export const DOCS_DIR = dirname(fileURLToPath(import.meta.url));

export const SECTIONS: Record<string, () => string | null> = {
  cli: cliSection,
  policies: policiesSection,
  'hardware-presets': hardwarePresetsSection,
  'model-presets': modelPresetsSection,
  'profile-fields': profileFieldsSection,
  'sweep-fields': sweepFieldsSection,
  'serve-sweep-fields': serveSweepFieldsSection,
  'serving-options': servingOptionsSection,
  'hil-options': hilOptionsSection,
  'generator-params': generatorSection,
  'run-summary': summarySection,
};

const MARKER = /<!-- generated:([a-z0-9-]+) -->\n(?:[\s\S]*?\n)?<!-- \/generated:\1 -->/g;

/** The names of the generated sections a page holds, in order. */
export function sectionsIn(text: string): string[] {
  return [...text.matchAll(MARKER)].map((m) => m[1]);
}

/** The section's current text in a page (between its markers), or undefined. */
export function sectionText(text: string, name: string): string | undefined {
  for (const m of text.matchAll(MARKER)) {
    if (m[1] === name) return m[0].slice(`<!-- generated:${name} -->\n`.length, -`<!-- /generated:${name} -->`.length).replace(/\n$/, '');
  }
  return undefined;
}

/**
 * The page with every generated section replaced by `generated[name]` (a null one kept as it is).
 * A marker naming no known section is an error naming the page and the known sections.
 */
export function fillPage(file: string, text: string, generated: Record<string, string | null>): string {
  const opens = [...text.matchAll(/<!-- generated:([a-z0-9-]+) -->/g)].map((m) => m[1]);
  const closed = sectionsIn(text);
  for (const name of opens) {
    if (!(name in generated)) throw new Error(`${file}: unknown generated section "${name}" (known: ${Object.keys(generated).join(', ')})`);
    if (!closed.includes(name)) throw new Error(`${file}: generated section "${name}" has no closing <!-- /generated:${name} -->`);
  }
  return text.replace(MARKER, (whole, name: string) => {
    const body = generated[name];
    return body === null ? whole : `<!-- generated:${name} -->\n${body}\n<!-- /generated:${name} -->`;
  });
}

/** Every generated section as the code gives it now (null: its source is not available here). */
export function generateAll(): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [name, make] of Object.entries(SECTIONS)) out[name] = make();
  return out;
}

export function docPages(): string[] {
  return fs
    .readdirSync(DOCS_DIR)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => join(DOCS_DIR, f));
}

async function main(argv: string[]): Promise<number> {
  const check = argv.includes('--check');
  const generated = generateAll();
  for (const [name, body] of Object.entries(generated)) if (body === null) console.error(`docs: section "${name}" kept as it is (its source is not available here: the HIL addon does not load)`);
  let stale = 0;
  for (const file of docPages()) {
    const text = fs.readFileSync(file, 'utf8');
    const next = fillPage(file, text, generated);
    if (next === text) continue;
    stale++;
    if (check) console.log(`${file}: generated sections differ from the code (run npm run docs)`);
    else {
      fs.writeFileSync(file, next);
      console.log(`wrote ${file}`);
    }
  }
  // the policy catalog that `kvtier policies` prints from and `kvtier run` finds a policy's module in
  registerBuiltinPolicies();
  const catalog = policyCatalogText(listPolicies(), await policyModules(listPolicies()));
  if (!fs.existsSync(POLICY_CATALOG_FILE) || fs.readFileSync(POLICY_CATALOG_FILE, 'utf8') !== catalog) {
    stale++;
    if (check) console.log(`${POLICY_CATALOG_FILE}: differs from the policy registry (run npm run docs)`);
    else {
      fs.writeFileSync(POLICY_CATALOG_FILE, catalog);
      console.log(`wrote ${POLICY_CATALOG_FILE}`);
    }
  }
  if (check) return stale ? 1 : 0;
  console.log(stale ? `${stale} file(s) updated` : 'docs are up to date');
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).then(
    (rc) => (process.exitCode = rc),
    (e: Error) => {
      console.error(`docs: error: ${e.message}`);
      process.exitCode = 1;
    },
  );
}
