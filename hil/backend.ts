// Opening a HIL backend: 'cuda' (a GPU), 'host' (CPU, real memory and files) or 'auto'.
import type { AttentionOptions, BackendKind, HilAddon, NativeBackend } from './addon-types.js';
import { loadHil } from './load-addon.js';

/** The loaded addon, or an error listing every place it was looked for and how to build it. */
export function requireAddon(): HilAddon {
  const loaded = loadHil();
  if (!loaded.ok) throw new Error(`kvtier HIL addon unavailable:\n  ${loaded.reasons.join('\n  ')}`);
  return loaded.addon;
}

/** attention: the options of every attention call (`kvtier hil options`); absent: the defaults. */
export function openBackend(kind: BackendKind | 'auto' = 'auto', device = 0, attention?: AttentionOptions): NativeBackend {
  return new (requireAddon().Backend)(kind, device, { attention });
}

/** Whether the cuda backend can run here, and why not. */
export function cudaStatus(): { available: boolean; reason: string } {
  const loaded = loadHil();
  if (!loaded.ok) return { available: false, reason: `addon not loaded: ${loaded.reasons[0] ?? 'unknown'}` };
  const p = loaded.addon.probeCuda();
  return { available: p.available, reason: p.available ? `${p.device?.name ?? 'GPU'}` : p.reason };
}
