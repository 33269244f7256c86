import { FieldChecks } from '../hardware/field-checks.js';
import { ValidationError } from '../hardware/validation-error.js';
import type { ModelSpec } from './model.js';
import { ATTENTION_KINDS, checkHeads } from './model-shape.js';

const REQUIRED = [
  'name', 'description', 'layers', 'hidden', 'q_heads', 'kv_heads', 'head_dim', 'attention',
  'weight_bytes_per_layer', 'flops_per_token_per_layer', 'other_weight_bytes', 'sources',
] as const;
const OPTIONAL = ['mla_latent_dim', 'mla_rope_dim'] as const;

/** Check a value against ModelSpec (model.ts); one ValidationError lists every problem. */
export function validateModel(value: unknown, source: string): ModelSpec {
  const checks = new FieldChecks();
  const top = checks.object(value, '', REQUIRED, OPTIONAL);
  if (top) {
    checks.string(top, 'name', '');
    checks.string(top, 'description', '', true);
    for (const k of ['layers', 'hidden', 'q_heads', 'kv_heads', 'head_dim'] as const) checks.integer(top, k, '');
    const attention = checks.oneOf(top, 'attention', '', ATTENTION_KINDS);
    checkHeads(top, attention, checks);
    for (const k of OPTIONAL) {
      if (attention === 'mla' && !(k in top)) checks.add(`${k} is missing (attention is "mla")`);
      if (attention !== undefined && attention !== 'mla' && k in top) {
        checks.add(`${k} is only for attention "mla" (attention is "${attention}")`);
      }
      checks.integer(top, k, '');
    }
    checks.number(top, 'weight_bytes_per_layer', '');
    checks.number(top, 'flops_per_token_per_layer', '');
    checks.number(top, 'other_weight_bytes', '', '>=0');
    checks.stringMap(top, 'sources', '');
  }
  if (checks.problems.length > 0) throw new ValidationError(source, checks.problems);
  return value as ModelSpec;
}
