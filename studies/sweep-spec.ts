/**
 * A sweep file (JSON or YAML): a grid of traces x hardware x policies x HBM budgets x seeds.
 * Trace entries are paths (relative to the sweep file) or generator settings; seeds apply to
 * generated traces. Expansion order is fixed, so a sweep's configurations and ids are deterministic.
 */
import * as fs from 'node:fs';
import { dirname, basename, resolve } from 'node:path';
import YAML from 'yaml';
import { parseBudget } from '../sim/budget.js';
import { parseServeSweepSpec, type ServeSweepSpec } from './serve-sweep-spec.js';
import { registerBuiltinPolicies } from '../policies/builtin.js';
import { isFullPolicy } from '../policies/registry.js';

export interface TraceEntry {
  /** a .kvt file */
  path?: string;
  /** generator settings (preset name + overrides), written into the sweep directory */
  generate?: Record<string, unknown>;
  name?: string;
  /** the model this trace replays with, instead of the sweep's `models` (a captured trace's own shape) */
  model?: string;
}

export interface PolicyEntry {
  name: string;
  options?: Record<string, unknown>;
}

export interface SweepSpec {
  name: string;
  traces: TraceEntry[];
  policies: PolicyEntry[];
  budgets: (string | number)[];
  hardware: string[];
  models: (string | null)[];
  seeds: number[];
  trace_steps: number;
  copy_mode?: 'per-run' | 'gather';
  /** what the report's recommendation asks of a policy (reports/recommend.ts); absent: the report's default */
  quality_target?: { recall_min?: number; quant_error_max?: number };
}

export interface SweepConfig {
  index: number;
  id: string;
  trace: TraceEntry & { name: string };
  seed: number;
  policy: PolicyEntry;
  budget: string | number;
  hardware: string;
  model: string | null;
}

const KEYS = ['kind', 'name', 'traces', 'policies', 'budgets', 'hardware', 'models', 'seeds', 'trace_steps', 'copy_mode', 'quality_target'];

/** Parse a sweep file of either kind: attention-level (default) or serving (`"kind": "serve"`). */
export function readAnySweepSpec(file: string): SweepSpec | ServeSweepSpec {
  const raw = readSweepRaw(file);
  if (typeof raw === 'object' && raw !== null && (raw as Record<string, unknown>).kind === 'serve') {
    const o = raw as Record<string, unknown>;
    const name = typeof o.name === 'string' ? o.name : basename(file).replace(/\.(json|ya?ml)$/i, '');
    return parseServeSweepSpec(o, file, name);
  }
  return parseSweepSpec(raw, file);
}

export function readSweepSpec(file: string): SweepSpec {
  return parseSweepSpec(readSweepRaw(file), file);
}

function readSweepRaw(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`${file}: cannot read sweep file (${(e as Error).message})`);
  }
  let raw: unknown;
  try {
    raw = /\.ya?ml$/i.test(file) ? YAML.parse(text) : JSON.parse(text);
  } catch (e) {
    throw new Error(`${file}: not valid ${/\.ya?ml$/i.test(file) ? 'YAML' : 'JSON'}: ${(e as Error).message}`);
  }
  return raw;
}

export function parseSweepSpec(raw: unknown, file: string): SweepSpec {
  const err = (msg: string) => new Error(`${file}: ${msg}`);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw err('the sweep must be an object');
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!KEYS.includes(k)) throw err(`unknown field "${k}" (fields: ${KEYS.join(', ')})`);
  if (o.kind !== undefined && o.kind !== 'attention') throw err(`"kind" must be "attention" (default) or "serve" (got ${JSON.stringify(o.kind)})`);
  const list = (k: string, required: boolean): unknown[] => {
    const v = o[k];
    if (v === undefined && !required) return [];
    if (!Array.isArray(v) || v.length === 0) throw err(`"${k}" must be a non-empty list`);
    return v;
  };
  const base = dirname(resolve(file));
  const traces = list('traces', true).map((t, i): TraceEntry => {
    if (typeof t === 'string') return { path: resolve(base, t) };
    if (typeof t === 'object' && t !== null) {
      const e = t as Record<string, unknown>;
      for (const k of Object.keys(e)) if (!['path', 'generate', 'name', 'model'].includes(k)) throw err(`traces[${i}]: unknown field "${k}" (fields: path, generate, name, model)`);
      if (e.path !== undefined && e.generate !== undefined) throw err(`traces[${i}]: give either "path" or "generate", not both`);
      if (e.model !== undefined && (typeof e.model !== 'string' || e.model === '')) throw err(`traces[${i}].model must be a model preset name or a model JSON path`);
      // like the sweep's models, a model file path is relative to the sweep file
      const model = typeof e.model === 'string' ? { model: e.model.endsWith('.json') ? resolve(base, e.model) : e.model } : {};
      if (typeof e.path === 'string') return { path: resolve(base, e.path), name: typeof e.name === 'string' ? e.name : undefined, ...model };
      if (typeof e.generate === 'object' && e.generate !== null) {
        return { generate: e.generate as Record<string, unknown>, name: typeof e.name === 'string' ? e.name : undefined, ...model };
      }
    }
    throw err(`traces[${i}] must be a path or { path, name, model } or { generate: {...}, name, model }`);
  });
  const policies = list('policies', true).map((p, i): PolicyEntry => {
    if (typeof p === 'string') return { name: p };
    if (typeof p === 'object' && p !== null && typeof (p as PolicyEntry).name === 'string') {
      const e = p as PolicyEntry;
      for (const k of Object.keys(e)) if (!['name', 'options'].includes(k)) throw err(`policies[${i}]: unknown field "${k}" (fields: name, options)`);
      if (e.options !== undefined && (typeof e.options !== 'object' || e.options === null)) throw err(`policies[${i}].options must be an object`);
      return { name: e.name, options: e.options };
    }
    throw err(`policies[${i}] must be a policy name or { name, options }`);
  });
  const budgets = list('budgets', true).map((b, i) => {
    if (typeof b !== 'string' && typeof b !== 'number') throw err(`budgets[${i}] must be a string such as "20%" or a number`);
    try {
      parseBudget(b, 1);
    } catch (e) {
      throw err(`budgets[${i}]: ${(e as Error).message.replace(/^--hbm-budget: /, '')}`);
    }
    return b;
  });
  const hardware = list('hardware', true).map((h, i) => {
    if (typeof h !== 'string') throw err(`hardware[${i}] must be a preset name or a profile path`);
    return h.endsWith('.json') ? resolve(base, h) : h;
  });
  const models = list('models', false).map((m, i) => {
    if (m !== null && typeof m !== 'string') throw err(`models[${i}] must be a model name or null (the trace's model)`);
    // a model file path is relative to the sweep file, like traces and hardware profiles
    return typeof m === 'string' && m.endsWith('.json') ? resolve(base, m) : (m as string | null);
  });
  const seeds = list('seeds', false).map((s, i) => {
    if (!Number.isInteger(s)) throw err(`seeds[${i}] must be an integer`);
    return s as number;
  });
  const ts = o.trace_steps ?? 16;
  if (!Number.isInteger(ts) || (ts as number) < 0) throw err('"trace_steps" must be a non-negative integer');
  if (o.copy_mode !== undefined && o.copy_mode !== 'per-run' && o.copy_mode !== 'gather') throw err('"copy_mode" must be "per-run" or "gather"');
  const name = o.name ?? basename(file).replace(/\.(json|ya?ml)$/i, '');
  if (typeof name !== 'string') throw err('"name" must be a string');
  const quality_target = parseQualityTarget(o.quality_target, err);
  return {
    name,
    traces,
    policies,
    budgets,
    hardware,
    models: models.length ? models : [null],
    seeds: seeds.length ? seeds : [1],
    trace_steps: ts as number,
    copy_mode: o.copy_mode as SweepSpec['copy_mode'],
    ...(quality_target ? { quality_target } : {}),
  };
}

/** `"quality_target": {"recall_min": 0.99, "quant_error_max": 0.012}`, either field optional. */
function parseQualityTarget(v: unknown, err: (msg: string) => Error): SweepSpec['quality_target'] {
  if (v === undefined) return undefined;
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw err('"quality_target" must be an object with "recall_min" and/or "quant_error_max"');
  const t = v as Record<string, unknown>;
  for (const k of Object.keys(t)) {
    if (k !== 'recall_min' && k !== 'quant_error_max') throw err(`quality_target: unknown field "${k}" (fields: recall_min, quant_error_max)`);
  }
  const r = t.recall_min;
  if (r !== undefined && !(typeof r === 'number' && r >= 0 && r <= 1)) throw err(`quality_target.recall_min must be a number in [0, 1] (got ${JSON.stringify(r)})`);
  const q = t.quant_error_max;
  if (q !== undefined && !(typeof q === 'number' && q >= 0)) throw err(`quality_target.quant_error_max must be a number >= 0 (got ${JSON.stringify(q)})`);
  return { ...(r !== undefined ? { recall_min: r } : {}), ...(q !== undefined ? { quant_error_max: q } : {}) };
}

function slug(s: string): string {
  return s.replace(/\.kvt$/, '').replace(/[^A-Za-z0-9.+-]+/g, '_');
}

function budgetSlug(b: string | number): string {
  return slug(String(b).replace('%', 'pct'));
}

/**
 * Expand the grid in a fixed order; the full-cache policy (definition.full) runs once per (trace, hardware, model, seed).
 * A trace that names its own model runs with that one instead of the sweep's `models`.
 */
export function expandSweep(spec: SweepSpec): SweepConfig[] {
  registerBuiltinPolicies();
  const out: SweepConfig[] = [];
  for (const t of spec.traces) {
    const seeds = t.generate ? spec.seeds : [spec.seeds[0]];
    for (const seed of seeds) {
      const tname = t.name ?? (t.path ? basename(t.path) : 'generated');
      const traceName = t.generate ? `${slug(tname)}-s${seed}` : slug(tname);
      for (const hw of spec.hardware) {
        for (const model of t.model !== undefined ? [t.model] : spec.models) {
          for (const p of spec.policies) {
            const budgets = isFullPolicy(p.name) ? ['100%'] : spec.budgets;
            for (const b of budgets) {
              const index = out.length;
              const id = [String(index).padStart(4, '0'), traceName, slug(basename(hw)), model ? slug(basename(model).replace(/(\.model)?\.json$/, '')) : null, slug(p.name), budgetSlug(b)]
                .filter(Boolean)
                .join('_');
              out.push({ index, id, trace: { ...t, name: traceName }, seed, policy: p, budget: b, hardware: hw, model });
            }
          }
        }
      }
    }
  }
  return out;
}
