/** The `policies` section: every registered policy with its description, source and options. */
import { registerBuiltinPolicies } from '../../policies/builtin.js';
import type { OptionSpec } from '../../policies/policy.js';
import { listPolicies } from '../../policies/registry.js';
import { GENERATED_BY, table } from './markdown.js';

function optionRange(o: OptionSpec): string {
  if (o.choices) return o.choices.map((c) => `\`${c}\``).join(', ');
  if (o.type === 'boolean') return '`true`, `false`';
  if (o.min !== undefined && o.max !== undefined) return `${o.min} to ${o.max}`;
  if (o.min !== undefined) return `>= ${o.min}`;
  if (o.max !== undefined) return `<= ${o.max}`;
  return '';
}

export function policiesSection(): string {
  registerBuiltinPolicies();
  const defs = listPolicies();
  const parts = [GENERATED_BY('the policy registry (policies/registry.ts, policies/builtin.ts; `kvtier policies`)'), ''];
  parts.push(table(['policy', 'options'], defs.map((d) => [`[\`${d.name}\`](#${d.name})${d.oracle ? ' (oracle)' : ''}`, d.options.map((o) => `\`${o.name}\``).join(', ') || '—'])));
  for (const d of defs) {
    parts.push('', `### ${d.name}`, '');
    if (d.oracle) parts.push('**Oracle**: reads the future; a bound to compare against, not a deployable policy.', '');
    parts.push(d.description, '', `Source: ${d.source}`, '');
    if (d.options.length === 0) {
      parts.push('No options.');
      continue;
    }
    parts.push(
      table(
        ['option', 'type', 'default', 'values', 'meaning'],
        d.options.map((o) => [`\`${o.name}\``, o.type, `\`${JSON.stringify(o.default)}\``, optionRange(o), o.description]),
      ),
    );
  }
  return parts.join('\n');
}
