/**
 * The example policy of docs/add-a-policy.md, taken from the page as it is: its code block is
 * written to a temporary file (its `./x.js` imports pointed at policies/), imported, registered,
 * replayed on a hand-made trace with hand-derived expectations, and held to the policy contract
 * of test/policies/contract.test.ts (budget held after every step, refusals and spills counted,
 * deterministic) over the same generated traces and budgets.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import type { PolicyDefinition } from '../../policies/policy.js';
import { getPolicy, registerPolicy, resolveOptions } from '../../policies/registry.js';
import type { KVCache } from '../../sim/kv-cache.js';
import type { TraceStep } from '../../traces/format.js';
import { generatedHeader, generateSteps } from '../../traces/generator.js';
import { replayPolicy } from '../policies/harness.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PAGE = join(ROOT, 'docs/add-a-policy.md');
const EXAMPLE = /<!-- example:policies\/([a-z0-9-]+\.ts) -->\n```ts\n([\s\S]*?)\n```/;

/** The example's file name and code, as the page shows them. */
function exampleOf(page: string): { file: string; code: string } {
  const m = EXAMPLE.exec(page);
  if (!m) throw new Error(`${PAGE}: no "<!-- example:policies/NAME.ts -->" followed by a \`\`\`ts block`);
  return { file: m[1], code: m[2] };
}

/** Write the example where it can be imported: its relative imports point at policies/. */
function writeExample(): string {
  const { file, code } = exampleOf(fs.readFileSync(PAGE, 'utf8'));
  const policiesDir = join(ROOT, 'policies');
  const rewritten = code.replace(/from '\.\/([a-z0-9-]+)\.js'/g, (_m, mod: string) => `from '${join(policiesDir, `${mod}.js`)}'`);
  const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-doc-policy-'));
  // an ES module, as in the project
  fs.writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  const path = join(dir, file);
  fs.writeFileSync(path, rewritten);
  return path;
}

/** The type checker's complaints about the example, with the project's compiler options. */
function typeErrors(path: string): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (!config) throw new Error('tsconfig.json did not parse');
  // rootDir is the project's; the example lives outside it
  const options = { ...config.options, noEmit: true, rootDir: undefined, typeRoots: [join(ROOT, 'node_modules/@types')] };
  const program = ts.createProgram([path], options);
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

const examplePath = writeExample();

async function loadExample(): Promise<PolicyDefinition<any>> {
  const mod = (await import(examplePath)) as Record<string, unknown>;
  const defs = Object.values(mod).filter((v): v is PolicyDefinition<any> => typeof v === 'object' && v !== null && 'create' in v && 'options' in v);
  expect(defs).toHaveLength(1);
  return defs[0];
}

const def = await loadExample();

describe('docs/add-a-policy.md example', () => {
  it('type-checks with the project\'s compiler options', () => {
    expect(typeErrors(examplePath)).toEqual([]);
  });

  it('is one file exporting one definition, registered under its name once', () => {
    expect(def.name).toBe('cold-offload');
    expect(def.oracle).toBeFalsy();
    registerPolicy(def);
    expect(getPolicy('cold-offload')).toBe(def);
    expect(() => registerPolicy(def)).toThrow(/already registered/);
    expect(resolveOptions(def, {})).toEqual({ decay: 0.9, offload_tier: 'dram', offload_bits: 8 });
  });

  // 1 layer, 4-token blocks, an 8-token prompt (blocks 0 and 1), 2 steps: step 0 creates block 2.
  // Every row: block 0 carries 0.6, block 1 0.1, block 2 0.3. The prefill observation scores
  // block 0 at 0.6 and block 1 at 0.1; with a budget of 2 blocks, step 0 must make room for
  // block 2, so the colder block 1 leaves HBM; step 1 creates nothing and changes nothing.
  const massOf = (_s: number, _l: number, n: number) => [0.6, 0.1, 0.3].slice(0, n);

  it('moves the coldest block to the offload tier at offload_bits to make room for the new block', () => {
    const r = replayPolicy(def, 2, { layers: 1, prompt: 8, steps: 2, massOf, options: { offload_bits: 4 } });
    expect(r.log.map((a) => [a.step, a.what, a.args, a.ok])).toEqual([[0, 'demote:dram:4', [0, 1], true]]);
    expect(r.tiers(0)).toEqual([0, 1, 0]);
    expect(r.bits(0)).toEqual([16, 4, 16]);
    expect(r.driver.counters.refused.alloc ?? 0).toBe(0);
  });

  it('drops the block instead when the offload tier is full', () => {
    const r = replayPolicy(def, 2, { layers: 1, prompt: 8, steps: 2, massOf, dramBlocks: 0 });
    expect(r.log.map((a) => [a.step, a.what, a.args, a.ok])).toEqual([
      [0, 'demote:dram:8', [0, 1], false],
      [0, 'evict', [0, 1], true],
    ]);
    expect(r.tiers(0)[1]).toBeLessThan(0);
    expect(r.driver.counters.refused.demote).toBe(1);
  });

  it('refuses an offload tier the machine lacks and bits it cannot store, naming the valid values', () => {
    expect(() => replayPolicy(def, 2, { layers: 1, massOf, options: { offload_tier: 'cxl' } })).toThrow('no tier "cxl" below HBM (tiers: dram, nvme)');
    expect(() => replayPolicy(def, 2, { layers: 1, massOf, options: { offload_bits: 3 } })).toThrow('offload_bits must be one of 16, 8, 4, 2 (got 3)');
  });

  // the contract of test/policies/contract.test.ts, on the same generated traces and budgets
  const traces = [1, 2].map((kv_groups) => {
    const input = { preset: 'default' as const, layers: 3, kv_groups, block_size: 16, prompt_tokens: 100, steps: 36, seed: 11 + kv_groups, encoding: 'dense' as const };
    return { kv_groups, header: generatedHeader(input), steps: [...generateSteps(input)] as TraceStep[] };
  });
  const CONFIGS: { budget: number; dramBlocks?: number }[] = [{ budget: 2 }, { budget: 5 }, { budget: 12 }, { budget: 3, dramBlocks: 2 }];

  const hbmBytes = (c: KVCache) => {
    let bytes = 0;
    for (let l = 0; l < c.layers; l++) for (let b = 0; b < c.created[l]; b++) if (c.tierOf(l, b) === 0) bytes += c.bytesOf(c.bitsOf(l, b));
    return bytes;
  };

  function run(t: (typeof traces)[number], budget: number, dramBlocks?: number) {
    const hbm: number[] = [];
    const r = replayPolicy(def, budget, { fullHeader: t.header, trace: t.steps, dramBlocks, onStep: (_r, cache) => hbm.push(hbmBytes(cache)) });
    return { ...r, hbm };
  }

  it.each(traces.map((t) => [t.kv_groups, t] as const))('keeps the policy contract with %i KV group(s)', (_g, t) => {
    let demoted = 0;
    for (const { budget, dramBlocks } of CONFIGS) {
      const a = run(t, budget, dramBlocks);
      const cap = a.cache.capacity[0];
      expect(cap).toBe(t.header.layers * budget * a.cache.bytesOf(16));
      expect(a.hbm).toHaveLength(t.header.steps);
      for (const bytes of a.hbm) expect(bytes).toBeLessThanOrEqual(cap);
      const c = a.driver.counters;
      for (const [phase, prefix] of [[(s: number) => s < 0, 'prefill_'], [(s: number) => s >= 0, '']] as const) {
        const asked = a.log.filter((x) => phase(x.step));
        for (const kind of ['evict', 'demote']) {
          const of = (x: (typeof asked)[number]) => (x.what.startsWith('demote:') ? 'demote' : x.what) === kind;
          expect(c.refused[prefix + kind] ?? 0).toBe(asked.filter((x) => of(x) && x.ok === false).length);
          expect(c.actions[prefix + kind] ?? 0).toBe(asked.filter((x) => of(x) && x.ok === true).length);
        }
      }
      // the policy makes room before each new block, so no new block finds HBM full
      expect(c.refused.alloc ?? 0).toBe(0);
      demoted += c.actions.demote ?? 0;
      const again = run(t, budget, dramBlocks);
      expect(again.log).toEqual(a.log);
      expect(again.results.map((s) => s.timing)).toEqual(a.results.map((s) => s.timing));
      expect(again.driver.counters).toEqual(c);
    }
    // the budgets below the context make it act
    expect(demoted).toBeGreaterThan(0);
  });
});
