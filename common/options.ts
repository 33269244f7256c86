/**
 * Typed options of a registered definition (a policy, a prefix-cache policy): each option has a
 * name, a type, a default, a description and its valid range or choices. `resolveOptions` turns
 * raw values (strings from the CLI, JSON values from a sweep file) into typed ones, with an error
 * naming the definition, the option and what is valid.
 */
export type OptionType = 'number' | 'integer' | 'boolean' | 'string';

export interface OptionSpec {
  name: string;
  type: OptionType;
  default: number | boolean | string;
  description: string;
  /** for strings: the allowed values */
  choices?: string[];
  min?: number;
  max?: number;
}

/** A definition with typed options, named `${noun} ${name}` in errors. */
export interface WithOptions {
  readonly name: string;
  readonly options: readonly OptionSpec[];
}

/**
 * Every option of `def` at its default, overridden by `raw`: unknown names, wrong types and
 * out-of-range values are errors that start with `${noun} ${def.name}`.
 */
export function resolveOptions(noun: string, def: WithOptions, raw: Record<string, unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const o of def.options) out[o.name] = o.default;
  for (const [key, value] of Object.entries(raw)) {
    const spec = def.options.find((o) => o.name === key);
    if (!spec) {
      const valid = def.options.map((o) => o.name).join(', ') || '(none)';
      throw new Error(`${noun} ${def.name}: unknown option "${key}" (options: ${valid})`);
    }
    out[key] = coerce(`${noun} ${def.name}: option ${spec.name}`, spec, value);
  }
  return out;
}

function coerce(where: string, spec: OptionSpec, value: unknown): unknown {
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
