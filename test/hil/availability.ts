// Which backends these tests can run, and the reason shown when one is skipped.
import { cudaStatus } from '../../hil/backend.js';
import { loadHil } from '../../hil/load-addon.js';

export function backendAvailability(kind: 'host' | 'cuda'): { available: boolean; reason: string } {
  const loaded = loadHil();
  if (!loaded.ok) return { available: false, reason: `native addon not built (${loaded.reasons[0]}); run npm run build:native` };
  if (kind === 'host') return { available: true, reason: '' };
  return cudaStatus();
}
