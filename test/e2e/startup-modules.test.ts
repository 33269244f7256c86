/**
 * What the quick commands load (bin/kvtier.js runs the compiled dist/, or its bundle in dist/bundle/
 * where that is fresh; build both with `npm run build`): the root help only commander, `policies`
 * and `run` none of the heavy libraries (vega, arquero, mathjs, resvg, piscina, yaml), which the
 * commands that need them load themselves. A file of the bundle counts as the modules it holds
 * (dist/bundle/modules.json: compiled ones, and commander's). Timings are in perf/startup.bench.mjs.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertDistFresh } from '../helpers/dist-fresh.js';
import { generateTrace } from '../../traces/generator.js';
import { catalogOf, formatPolicyList, policyModuleOf } from '../../cli/policy-catalog.js';
import { simulate } from '../../sim/run.js';
import { registerBuiltinPolicies } from '../../policies/builtin.js';
import { listPolicies } from '../../policies/registry.js';

beforeAll(assertDistFresh);

const dir = fs.mkdtempSync(join(tmpdir(), 'kvtier-startup-modules-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const HEAVY = /^(vega.*|d3-.*|arquero|mathjs|@resvg\/.*|piscina|yaml|acorn)$/;

const DIST = pathToFileURL(resolve('dist')).href + '/';
const BUNDLE = `${DIST}bundle/`;

/** A loaded URL as the modules it stands for: those a file of the bundle holds (commander's among them), else itself. */
function compiledModules(url: string): string[] {
  if (!url.startsWith(BUNDLE)) return [url];
  const held = (JSON.parse(fs.readFileSync(resolve('dist/bundle/modules.json'), 'utf8')) as Record<string, string[]>)[url.slice(BUNDLE.length)];
  if (!held) throw new Error(`${url}: not in dist/bundle/modules.json`);
  return held.map((m) => new URL(m, DIST).href);
}

/** The module URLs a kvtier command loads (a file of the bundle as the modules it holds), and its output; fails when the command fails. */
function modulesLoaded(...args: string[]): { urls: string[]; stdout: string } {
  const log = join(dir, `modules-${args[0]}.log`);
  fs.rmSync(log, { force: true });
  const r = spawnSync(process.execPath, ['--import', resolve('test/fixtures/module-log/register.mjs'), 'bin/kvtier.js', ...args], {
    encoding: 'utf8',
    env: { ...process.env, KVTIER_MODULE_LOG: log },
  });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return { urls: fs.readFileSync(log, 'utf8').split('\n').flatMap(compiledModules), stdout: r.stdout };
}

/** The npm packages a kvtier command loads, sorted; fails when the command fails. */
function packagesLoaded(...args: string[]): string[] {
  const pkgs = new Set<string>();
  for (const url of modulesLoaded(...args).urls) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    if (m) pkgs.add(m[1]);
  }
  return [...pkgs].sort();
}

describe('startup', () => {
  it('--help loads commander and nothing else from node_modules', () => {
    expect(packagesLoaded('--help')).toEqual(['commander']);
  });

  it('policies and models load no heavy library', () => {
    expect(packagesLoaded('policies').filter((p) => HEAVY.test(p))).toEqual([]);
    expect(packagesLoaded('models').filter((p) => HEAVY.test(p))).toEqual([]);
  });

  it('policies answers from the catalog file: no policy module loads, and it prints what the registry gives', () => {
    registerBuiltinPolicies();
    const list = modulesLoaded('policies');
    expect(list.urls.filter((u) => /\/dist\/policies\//.test(u))).toEqual([]);
    expect(list.stdout).toBe(`${formatPolicyList(catalogOf(listPolicies()))}\n`);
    const json = modulesLoaded('policies', '--json');
    expect(JSON.parse(json.stdout)).toEqual(JSON.parse(JSON.stringify(catalogOf(listPolicies()))));
  });

  it('sweep --help loads no heavy library (the sweep loads its worker pool and reports when it runs)', () => {
    expect(packagesLoaded('sweep', '--help').filter((p) => HEAVY.test(p))).toEqual([]);
  });

  it('run writes its run directory without vega or arquero', () => {
    const trace = join(dir, 't.kvt');
    generateTrace(trace, { model: 'llama-3-8b', prompt_tokens: 256, steps: 3, seed: 1 });
    const loaded = packagesLoaded('run', '--trace', trace, '--policy', 'h2o', '--out', join(dir, 'run'));
    expect(loaded).toContain('@uwdata/flechette');
    expect(loaded.filter((p) => HEAVY.test(p))).toEqual([]);
    expect(fs.readdirSync(join(dir, 'run')).sort()).toEqual(['config.json', 'steps.arrow', 'steps.csv', 'summary.json', 'trace.json']);
  });

  it('run loads the module of the policy it runs and no other policy, with the results of simulate()', () => {
    const trace = join(dir, 't2.kvt');
    generateTrace(trace, { model: 'llama-3-8b', prompt_tokens: 512, steps: 4, seed: 2 });
    for (const policy of ['h2o', 'oracle', 'dpnc']) {
      const out = join(dir, `run-${policy}`);
      const { urls } = modulesLoaded('run', '--trace', trace, '--policy', policy, '--hbm-budget', '25%', '--out', out);
      const policies = urls.map((u) => /\/dist\/policies\/([^/]+)\.js$/.exec(u)?.[1]).filter((x): x is string => x !== undefined);
      expect(policies, policy).toContain(policyModuleOf(policy));
      // none of the other built-in policies' modules
      const others = listPolicies().filter((d) => d.name !== policy).map((d) => policyModuleOf(d.name));
      expect(policies.filter((p) => others.includes(p)), policy).toEqual([]);
      const summary = JSON.parse(fs.readFileSync(join(out, 'summary.json'), 'utf8'));
      expect(summary, policy).toEqual(JSON.parse(JSON.stringify(simulate({ trace, policy, hardware: 'h100-pcie5', hbm_budget: '25%', group_size: 128, trace_steps: 32, copy_mode: 'per-run' }).summary)));
    }
  });
});
