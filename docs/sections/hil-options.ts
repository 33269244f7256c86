/** The `hil-options` section: the native addon's attention option table, where the addon loads. */
import { loadHil } from '../../hil/load-addon.js';
import { GENERATED_BY, table } from './markdown.js';

/** The addon's option table, or null where the addon does not load (the section is then kept as it is). */
export function hilOptionsSection(): string | null {
  const loaded = loadHil();
  if (!loaded.ok) return null;
  const rows = loaded.addon.attentionOptionTable().map((r) => [`\`${r.name}\``, r.values, `\`${r.default}\``, r.description]);
  return [GENERATED_BY('the native addon\'s option table (hil/native/common/attention-options.h; `kvtier hil options`)'), '', table(['option', 'values', 'default', 'meaning'], rows)].join('\n');
}
