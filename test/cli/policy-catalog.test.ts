/**
 * policies/catalog.json is the registry as `kvtier policies --json` lists it (npm run docs writes it);
 * a file that is not a list of named policies, or whose digest of the policies' sources no longer
 * holds, is not read (the command then loads the registry).
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { catalogOf, formatPolicyList, POLICY_CATALOG_FILE, policyCatalogText, policyModuleOf, policyModules, readPolicyCatalog, sourcesDigest } from '../../cli/policy-catalog.js';
import { registerBuiltinPolicies } from '../../policies/builtin.js';
import { listPolicies } from '../../policies/registry.js';

describe('policy catalog', () => {
  registerBuiltinPolicies();

  it('the file is what the registry gives now (else: npm run docs)', async () => {
    expect(fs.readFileSync(POLICY_CATALOG_FILE, 'utf8')).toBe(policyCatalogText(listPolicies(), await policyModules(listPolicies())));
    expect(readPolicyCatalog()).toEqual(JSON.parse(JSON.stringify(catalogOf(listPolicies()))));
  });

  it('names the module of every built-in policy: importing it gives the registered definition', async () => {
    for (const def of listPolicies()) {
      const base = policyModuleOf(def.name);
      expect(base, def.name).toMatch(/^[a-z0-9-]+$/);
      const m = (await import(pathToFileURL(join(import.meta.dirname, '../../policies', `${base}.ts`)).href)) as Record<string, unknown>;
      expect(Object.values(m), def.name).toContain(def);
    }
    expect(policyModuleOf('no-such-policy')).toBeUndefined();
    expect(policyModuleOf('toString')).toBeUndefined();
  });

  it('lists each policy with its flags, source and options', () => {
    const text = formatPolicyList(catalogOf(listPolicies()));
    const oracle = text.split('\n').find((l) => l.startsWith('oracle'));
    expect(oracle).toBe('oracle  [ORACLE: reads the future; a bound, not deployable]');
    expect(text).toContain('\n  --opt offload_tier=<string>  (default "dram") tier that receives demoted blocks (e.g. dram, cxl, nvme)\n');
    expect(text.split('\n').filter((l) => !l.startsWith('  '))).toEqual(listPolicies().map((d) => d.name + (d.oracle ? '  [ORACLE: reads the future; a bound, not deployable]' : '')));
  });

  it('a missing, unparsable or malformed file is not read, nor one whose sources changed since', () => {
    const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-catalog-'));
    try {
      fs.writeFileSync(join(dir, 'a.ts'), 'export const a = 1;\n');
      expect(readPolicyCatalog(join(dir, 'none.json'))).toBeUndefined();
      const digest = sourcesDigest(dir)!;
      expect(digest).toMatch(/^[0-9a-f]{64}$/);
      const h2o = { name: 'h2o', options: [] };
      for (const [name, text] of [
        ['cut.json', '{"policies": [{"name": '],
        ['list.json', JSON.stringify([h2o])],
        ['no-options.json', JSON.stringify({ sources_sha256: digest, policies: [{ name: 'h2o' }] })],
        ['no-digest.json', JSON.stringify({ policies: [h2o] })],
      ]) {
        fs.writeFileSync(join(dir, name), text);
        expect(readPolicyCatalog(join(dir, name)), name).toBeUndefined();
      }
      fs.writeFileSync(join(dir, 'ok.json'), JSON.stringify({ sources_sha256: digest, modules: { h2o: 'h2o' }, policies: [h2o] }));
      expect(readPolicyCatalog(join(dir, 'ok.json'))).toEqual([h2o]);
      expect(policyModuleOf('h2o', join(dir, 'ok.json'))).toBe('h2o');
      // a module name that is not a plain base name makes the file unreadable
      fs.writeFileSync(join(dir, 'path.json'), JSON.stringify({ sources_sha256: digest, modules: { h2o: '../h2o' }, policies: [h2o] }));
      expect(readPolicyCatalog(join(dir, 'path.json'))).toBeUndefined();
      expect(policyModuleOf('h2o', join(dir, 'path.json'))).toBeUndefined();
      // as written for no policies, then a source changed, then a source added
      fs.writeFileSync(join(dir, 'empty.json'), policyCatalogText([], {}, dir));
      expect(readPolicyCatalog(join(dir, 'empty.json'))).toEqual([]);
      fs.writeFileSync(join(dir, 'a.ts'), 'export const a = 2;\n');
      expect(readPolicyCatalog(join(dir, 'ok.json'))).toBeUndefined();
      expect(policyModuleOf('h2o', join(dir, 'ok.json'))).toBeUndefined();
      fs.writeFileSync(join(dir, 'empty.json'), policyCatalogText([], {}, dir));
      fs.writeFileSync(join(dir, 'b.ts'), '');
      expect(readPolicyCatalog(join(dir, 'empty.json'))).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
