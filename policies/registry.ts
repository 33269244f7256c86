/**
 * The one policy registry: each policy file exports a PolicyDefinition and is registered here once
 * (the built-in list is in builtin.ts). A duplicate name is rejected unless `override` is set.
 */
import type { OptionSpec, Policy, PolicyDefinition, PolicySetup } from './policy.js';

const registry = new Map<string, PolicyDefinition<any>>();

export function registerPolicy(def: PolicyDefinition<any>, opts: { override?: boolean } = {}): void {
  if (registry.has(def.name) && !opts.override) {
    throw new Error(`policy "${def.name}" is already registered (pass { override: true } to replace it)`);
  }
  registry.set(def.name, def);
}

export function listPolicies(): PolicyDefinition<any>[] {
  return [...registry.values()];
}

export function getPolicy(name: string): PolicyDefinition<any> {
  const def = registry.get(name);
  if (!def) {
    throw new Error(`unknown policy "${name}" (valid: ${[...registry.keys()].join(', ')})`);
  }
  return def;
}

/** True when `name` is a registered policy that is the quality reference (definition.full): it runs at 100% of the KV. */
export function isFullPolicy(name: string): boolean {
  return registry.get(name)?.full === true;
}

/**
 * Resolve raw option values (strings from the CLI or JSON values from a sweep file) against the
 * policy's typed option list: unknown names, wrong types and out-of-range values are errors.
 */
export function resolveOptions(def: PolicyDefinition<any>, raw: Record<string, unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const o of def.options) out[o.name] = o.default;
  for (const [key, value] of Object.entries(raw)) {
    const spec = def.options.find((o) => o.name === key);
    if (!spec) {
      const valid = def.options.map((o) => o.name).join(', ') || '(none)';
      throw new Error(`policy ${def.name}: unknown option "${key}" (options: ${valid})`);
    }
    out[key] = coerce(def.name, spec, value);
  }
  return out;
}

function coerce(policy: string, spec: OptionSpec, value: unknown): unknown {
  const where = `policy ${policy}: option ${spec.name}`;
  switch (spec.type) {
    case 'number':
    case 'integer': {
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isFinite(n)) throw new Error(`${where} must be a ${spec.type} (got ${JSON.stringify(value)})`);
      if (spec.type === 'integer' && !Number.isInteger(n)) throw new Error(`${where} must be an integer (got ${n})`);
      if (spec.min !== undefined && n < spec.min) throw new Error(`${where} must be >= ${spec.min} (got ${n})`);
      if (spec.max !== undefined && n > spec.max) throw new Error(`${where} must be <= ${spec.max} (got ${n})`);
      return n;
    }
    case 'boolean':
      if (value === true || value === 'true' || value === '1') return true;
      if (value === false || value === 'false' || value === '0') return false;
      throw new Error(`${where} must be true or false (got ${JSON.stringify(value)})`);
    case 'string':
      if (typeof value !== 'string') throw new Error(`${where} must be a string (got ${JSON.stringify(value)})`);
      if (spec.choices && !spec.choices.includes(value)) throw new Error(`${where} must be one of ${spec.choices.join(', ')} (got "${value}")`);
      return value;
  }
}

export function createPolicy(name: string, raw: Record<string, unknown>, setup: PolicySetup): { policy: Policy; options: Record<string, unknown> } {
  const def = getPolicy(name);
  const options = resolveOptions(def, raw);
  return { policy: def.create(options, setup), options };
}
