/**
 * A serving sweep file (`"kind": "serve"`): request traces x prefix-cache policies x cache
 * capacities x hardware x models x arrival time scales, expanded in a fixed order.
 */
import { dirname, resolve } from 'node:path';
import { DEFAULT_SERVING_OPTIONS, type ServingOptions } from '../serving/serving-config.js';

export interface ServeSweepSpec {
  kind: 'serve';
  name: string;
  requests: string[];
  caches: string[];
  /** total prefix-cache capacity in tokens; null = unbounded (the profile's tiers) */
  capacities: (number | null)[];
  hardware: string[];
  models: string[];
  time_scales: number[];
  /** replay only the first N requests of each trace */
  limit?: number;
  options: Partial<ServingOptions>;
}

export interface ServeSweepConfig {
  index: number;
  id: string;
  requests: string;
  cache: string;
  capacity: number | null;
  hardware: string;
  model: string;
  time_scale: number;
}

const KEYS = ['kind', 'name', 'requests', 'caches', 'capacities', 'hardware', 'models', 'time_scales', 'limit', 'options'];

export function parseServeSweepSpec(raw: Record<string, unknown>, file: string, name: string): ServeSweepSpec {
  const err = (msg: string) => new Error(`${file}: ${msg}`);
  for (const k of Object.keys(raw)) if (!KEYS.includes(k)) throw err(`unknown field "${k}" for a serve sweep (fields: ${KEYS.join(', ')})`);
  const list = <T>(k: string, check: (v: unknown) => v is T, what: string, fallback?: T[]): T[] => {
    const v = raw[k];
    if (v === undefined && fallback) return fallback;
    if (!Array.isArray(v) || v.length === 0) throw err(`"${k}" must be a non-empty list of ${what}`);
    v.forEach((x, i) => {
      if (!check(x)) throw err(`${k}[${i}] must be ${what} (got ${JSON.stringify(x)})`);
    });
    return v as T[];
  };
  const isStr = (v: unknown): v is string => typeof v === 'string';
  const isPos = (v: unknown): v is number => typeof v === 'number' && v > 0 && Number.isFinite(v);
  const isCap = (v: unknown): v is number | null | string => v === null || v === 'unbounded' || isPos(v);
  const base = dirname(resolve(file));
  const requests = list('requests', isStr, 'request-trace paths or mooncake:conversation / mooncake:synthetic').map((r) =>
    r.includes(':') && !r.includes('/') ? r : resolve(base, r),
  );
  const limit = raw.limit;
  if (limit !== undefined && !(Number.isInteger(limit) && (limit as number) > 0)) throw err('"limit" must be a positive integer');
  const options = raw.options ?? {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw err('"options" must be an object of serving options');
  const known = Object.keys(DEFAULT_SERVING_OPTIONS);
  for (const [k, v] of Object.entries(options)) {
    if (!known.includes(k)) throw err(`options: unknown serving option "${k}" (options: ${known.join(', ')})`);
    if (typeof v !== 'number' || !(v >= 0)) throw err(`options.${k} must be a number >= 0 (got ${JSON.stringify(v)})`);
  }
  return {
    kind: 'serve',
    name,
    requests,
    caches: list('caches', isStr, 'cache policy names'),
    capacities: list('capacities', isCap, 'positive token counts or "unbounded"').map((c) => (c === 'unbounded' ? null : (c as number | null))),
    hardware: list('hardware', isStr, 'hardware names or profile paths').map((h) => (h.endsWith('.json') ? resolve(base, h) : h)),
    models: list('models', isStr, 'model names'),
    time_scales: list('time_scales', isPos, 'positive numbers', [1]),
    limit: limit as number | undefined,
    options: options as Partial<ServingOptions>,
  };
}

const slug = (s: string) => s.replace(/[^A-Za-z0-9.+-]+/g, '_');

export function expandServeSweep(spec: ServeSweepSpec): ServeSweepConfig[] {
  const out: ServeSweepConfig[] = [];
  for (const requests of spec.requests)
    for (const hardware of spec.hardware)
      for (const model of spec.models)
        for (const time_scale of spec.time_scales)
          for (const cache of spec.caches)
            for (const capacity of spec.capacities) {
              const index = out.length;
              const name = requests.split('/').pop()!.replace(/\.(jsonl|csv)$/, '');
              const id = [String(index).padStart(4, '0'), slug(name), slug(hardware.split('/').pop()!), slug(model), `x${time_scale}`, slug(cache), capacity === null ? 'unbounded' : `${capacity}tok`].join('_');
              out.push({ index, id, requests, cache, capacity, hardware, model, time_scale });
            }
  return out;
}
