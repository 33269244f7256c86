// The attention options as a user gives them: `--attn KEY=VALUE` on `kvtier hil run`, `calibrate`
// and `compare` (repeatable), checked and completed by the addon's one table of options
// (hil/native/common/attention-options.h), which `kvtier hil options` prints.
import type { AttentionOptions, ResolvedAttentionOptions } from './addon-types.js';
import { requireAddon } from './backend.js';

/** commander's collector for `--attn KEY=VALUE`: one option per flag, each key at most once. */
export function attnFlag(value: string, previous: AttentionOptions = {}): AttentionOptions {
  const at = value.indexOf('=');
  if (at <= 0 || at === value.length - 1) {
    throw new Error(`--attn: expected KEY=VALUE (e.g. tensor_cores=off), got "${value}"; the options: kvtier hil options`);
  }
  const key = value.slice(0, at);
  if (key in previous) throw new Error(`--attn: ${key} given twice ("${previous[key]}" and "${value.slice(at + 1)}")`);
  return { ...previous, [key]: value.slice(at + 1) };
}

/** Every option with its value; throws, naming the option and its valid values, on a bad one. */
export function resolveAttentionOptions(o: AttentionOptions = {}): ResolvedAttentionOptions {
  return requireAddon().attentionOptions(o);
}

/** The option table as `kvtier hil options` prints it. */
export function formatAttentionOptions(): string {
  const rows = requireAddon().attentionOptionTable();
  const lines = ['attention options (kvtier hil run|calibrate|compare --attn KEY=VALUE, repeatable):'];
  for (const r of rows) {
    lines.push(`  ${r.name}=${r.values}  (default ${r.default})`);
    lines.push(`      ${r.description}`);
  }
  return lines.join('\n');
}
