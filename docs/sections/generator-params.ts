/** The `generator-params` section: the trace generator's parameters with their doc comments, defaults and presets. */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_GENERATOR_PARAMS, PRESETS } from '../../traces/generator-params.js';
import { documentedFields } from './interface-fields.js';
import { GENERATED_BY, table } from './markdown.js';
import { ROOT } from './root.js';

const GENERATOR_SOURCE = 'traces/generator-params.ts';

export function generatorSection(): string {
  const source = fs.readFileSync(join(ROOT, GENERATOR_SOURCE), 'utf8');
  const defaults = DEFAULT_GENERATOR_PARAMS as Record<string, unknown>;
  const fields = documentedFields(source, 'GeneratorParams', GENERATOR_SOURCE);
  const undocumented = Object.keys(defaults).filter((k) => !fields.some((f) => f.name === k));
  if (undocumented.length) throw new Error(`${GENERATOR_SOURCE}: generator parameters without a doc comment in GeneratorParams: ${undocumented.join(', ')}`);
  const rows = fields.map((f) => [`\`${f.name}\``, `\`${JSON.stringify(defaults[f.name])}\``, f.doc.replace(/;?\s*default [^;]*$/, '') || '—']);
  const needle = documentedFields(source, 'NeedleParams', GENERATOR_SOURCE).map((f) => [`\`needle.${f.name}\``, f.doc]);
  const presets = Object.entries(PRESETS).map(([name, p]) => [`\`${name}\``, Object.keys(p).length ? `\`${JSON.stringify(p)}\`` : '(the defaults)']);
  return [
    GENERATED_BY(`${GENERATOR_SOURCE} (the parameters' doc comments, DEFAULT_GENERATOR_PARAMS, PRESETS)`),
    '',
    table(['parameter', 'default', 'meaning'], rows),
    '',
    'The needle (`--set needle.depth=0.3`, or `"needle": { … }` in a sweep\'s `generate`):',
    '',
    table(['parameter', 'meaning'], needle),
    '',
    'Presets (`--preset NAME`, `"preset"` in a sweep\'s `generate`); explicit parameters override them:',
    '',
    table(['preset', 'sets'], presets),
  ].join('\n');
}
