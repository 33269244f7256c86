/**
 * A validation grid file (`kvtier hil validate GRID.json`): a sweep file (sweep-spec.ts: traces,
 * policies, budgets, hardware, models, seeds) plus the fields of validation:
 * - contexts: prompt lengths of the generated traces, e.g. [8192, 32768, 131072]
 * - steps: decode steps per trace (generated: its length; captured: its first steps), default 32
 * - runs: HIL runs per cell (default 3), skip_steps: warm-up steps left out (default 1)
 * - calibration: "full" (default) or "quick" microbenchmarks
 * - a trace entry may name its own "models" (a captured trace needs the model it was captured from)
 *   and, if generated, its own "contexts"; and the "policies" (labels of the grid's) it runs
 * `policies` may be "all" (every registered policy); `hardware` is the one profile calibration starts from.
 */
import * as fs from 'node:fs';
import { dirname, resolve } from 'node:path';
import YAML from 'yaml';
import { registerBuiltinPolicies } from '../policies/builtin.js';
import { getPolicy, listPolicies, resolveOptions } from '../policies/registry.js';
import type { ValidateGrid } from '../hil/validate/grid.js';
import { parseSweepSpec } from './sweep-spec.js';

const EXTRA = ['contexts', 'steps', 'runs', 'skip_steps', 'calibration'];

export function readValidateGrid(file: string): ValidateGrid {
  let raw: unknown;
  try {
    const text = fs.readFileSync(file, 'utf8');
    raw = /\.ya?ml$/i.test(file) ? YAML.parse(text) : JSON.parse(text);
  } catch (e) {
    throw new Error(`${file}: cannot read the grid file (${(e as Error).message})`);
  }
  return parseValidateGrid(raw, file);
}

export function parseValidateGrid(raw: unknown, file: string): ValidateGrid {
  const err = (msg: string) => new Error(`${file}: ${msg}`);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw err('the grid must be an object');
  const o = { ...(raw as Record<string, unknown>) };
  const extra: Record<string, unknown> = {};
  for (const k of EXTRA) {
    extra[k] = o[k];
    delete o[k];
  }
  registerBuiltinPolicies();
  if (o.policies === undefined || o.policies === 'all') o.policies = listPolicies().map((p) => p.name);
  // per-trace models and contexts: taken out before the sweep grammar checks the entry
  const traceModels: (string[] | undefined)[] = [];
  const traceContexts: (number[] | undefined)[] = [];
  const tracePolicies: (string[] | undefined)[] = [];
  if (Array.isArray(o.traces)) {
    o.traces = o.traces.map((t, i) => {
      if (typeof t !== 'object' || t === null) {
        traceModels.push(undefined);
        traceContexts.push(undefined);
        tracePolicies.push(undefined);
        return t;
      }
      const { models, contexts, policies, ...rest } = t as Record<string, unknown>;
      if (policies !== undefined && (!Array.isArray(policies) || policies.length === 0 || !policies.every((m) => typeof m === 'string'))) throw err(`traces[${i}].policies must be a non-empty list of policy labels`);
      tracePolicies.push(policies as string[] | undefined);
      if (models !== undefined && (!Array.isArray(models) || models.length === 0 || !models.every((m) => typeof m === 'string'))) throw err(`traces[${i}].models must be a non-empty list of model names or files`);
      traceModels.push((models as string[] | undefined)?.map((m) => (m.endsWith('.json') ? resolve(dirname(resolve(file)), m) : m)));
      if (contexts !== undefined) {
        if (rest.generate === undefined) throw err(`traces[${i}].contexts: only a generated trace takes contexts (a captured trace has its own)`);
        traceContexts.push(contextList(contexts, `traces[${i}].contexts`));
      } else traceContexts.push(undefined);
      return rest;
    });
  }
  const spec = parseSweepSpec(o, file);
  if (spec.hardware.length !== 1) throw err(`"hardware" must list exactly one profile: the base that calibration starts from (got ${spec.hardware.length})`);
  function contextList(v: unknown, k: string): number[] {
    if (!Array.isArray(v) || v.length === 0) throw err(`"${k}" must be a non-empty list of prompt lengths (tokens) for the generated traces, e.g. [8192, 32768, 131072]`);
    const xs = v.map((c, i) => {
      if (!Number.isInteger(c) || (c as number) < 16) throw err(`${k}[${i}] must be an integer >= 16 (tokens; got ${JSON.stringify(c)})`);
      return c as number;
    });
    if (new Set(xs).size !== xs.length) throw err(`"${k}" lists a context twice`);
    return xs;
  }
  const posInt = (k: string, v: unknown, dflt: number, min = 1): number => {
    if (v === undefined) return dflt;
    if (!Number.isInteger(v) || (v as number) < min) throw err(`"${k}" must be an integer >= ${min} (got ${JSON.stringify(v)})`);
    return v as number;
  };
  const generated = spec.traces.some((t, i) => t.generate && !traceContexts[i]);
  const ctx = extra.contexts === undefined && !generated ? [] : contextList(extra.contexts, 'contexts');
  const calibration = extra.calibration ?? 'full';
  if (calibration !== 'full' && calibration !== 'quick') throw err(`"calibration" must be "full" or "quick" (got ${JSON.stringify(calibration)})`);
  const labels = new Set<string>();
  const policies = spec.policies.map((p, i) => {
    const options: Record<string, string> = {};
    for (const [k, v] of Object.entries(p.options ?? {})) options[k] = String(v);
    const label = [p.name, ...Object.values(options)].join('-').replace(/[^A-Za-z0-9._-]+/g, '_');
    if (labels.has(label)) throw err(`policies[${i}]: "${label}" is listed twice`);
    labels.add(label);
    let full: boolean;
    try {
      const def = getPolicy(p.name);
      resolveOptions(def, p.options ?? {});
      full = def.full === true;
    } catch (e) {
      throw err(`policies[${i}]: ${(e as Error).message}`);
    }
    return { name: p.name, options, label, full };
  });
  for (const [i, ps] of tracePolicies.entries()) {
    for (const l of ps ?? []) if (!labels.has(l)) throw err(`traces[${i}].policies: "${l}" is not one of the grid's policies (${[...labels].join(', ')})`);
  }
  const models = spec.models.filter((m): m is string => m !== null);
  if (spec.traces.some((t, i) => t.generate && !traceModels[i]) && models.length === 0) throw err('"models" must list at least one model for the generated traces');
  return {
    name: spec.name,
    traces: spec.traces.map((t, i) => {
      const name = t.name ?? (t.path ? t.path.replace(/^.*\//, '').replace(/\.kvt$/, '') : t.generate && typeof t.generate.preset === 'string' ? t.generate.preset : `trace${i}`);
      return { name, ...(t.path ? { path: t.path } : {}), ...(t.generate ? { generate: t.generate } : {}), ...(traceModels[i] ? { models: traceModels[i] } : {}), ...(traceContexts[i] ? { contexts: traceContexts[i] } : {}), ...(tracePolicies[i] ? { policies: tracePolicies[i] } : {}) };
    }),
    contexts: ctx,
    budgets: spec.budgets.map(String),
    models,
    policies,
    seeds: spec.seeds,
    base_hardware: spec.hardware[0],
    steps: posInt('steps', extra.steps, 32),
    runs: posInt('runs', extra.runs, 3),
    skip_steps: posInt('skip_steps', extra.skip_steps, 1, 0),
    calibration,
  };
}
