// Opening a HIL backend: 'cuda' (a GPU), 'host' (CPU, real memory and files) or 'auto'.
import type { BackendKind, NativeBackend } from './addon-types.js';
import { loadHil } from './load-addon.js';

export function openBackend(kind: BackendKind | 'auto' = 'auto', device = 0): NativeBackend {
  const loaded = loadHil();
  if (!loaded.ok) throw new Error(`kvtier HIL addon unavailable:\n  ${loaded.reasons.join('\n  ')}`);
  return new loaded.addon.Backend(kind, device);
}

/** Whether the cuda backend can run here, and why not. */
export function cudaStatus(): { available: boolean; reason: string } {
  const loaded = loadHil();
  if (!loaded.ok) return { available: false, reason: `addon not loaded: ${loaded.reasons[0] ?? 'unknown'}` };
  const p = loaded.addon.probeCuda();
  return { available: p.available, reason: p.available ? `${p.device?.name ?? 'GPU'}` : p.reason };
}
