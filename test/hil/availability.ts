// Which backends these tests can run, and the reason shown when one is skipped. Where the host
// backend is required (CI), a missing addon fails the test file instead of skipping its HIL tests;
// the cuda backend always skips without a GPU.
import { cudaStatus } from '../../hil/backend.js';
import { loadHil } from '../../hil/load-addon.js';

/**
 * Whether a missing host backend is an error here: KVTIER_HIL_REQUIRE_HOST=1 (.ci/run sets it), or
 * CI=true unless KVTIER_HIL_REQUIRE_HOST=0.
 */
export function hostRequirement(env: Record<string, string | undefined>): { required: boolean; why: string } {
  const v = env.KVTIER_HIL_REQUIRE_HOST;
  if (v !== undefined && v !== '') {
    if (v !== '0' && v !== '1') throw new Error(`KVTIER_HIL_REQUIRE_HOST: expected 0 or 1, got "${v}"`);
    return { required: v === '1', why: `KVTIER_HIL_REQUIRE_HOST=${v}` };
  }
  return env.CI === 'true' ? { required: true, why: 'CI=true' } : { required: false, why: 'neither KVTIER_HIL_REQUIRE_HOST=1 nor CI=true' };
}

type Loaded = { ok: true } | { ok: false; reasons: string[] };

/** The availability of `kind` given how the addon loaded; throws where the host backend is required and missing. */
export function availabilityOf(
  kind: 'host' | 'cuda',
  loaded: Loaded,
  requirement: { required: boolean; why: string },
  cuda: () => { available: boolean; reason: string },
): { available: boolean; reason: string } {
  if (!loaded.ok) {
    const reason = `native addon not built (${loaded.reasons[0]}); run npm run build:native`;
    if (kind === 'host' && requirement.required) {
      throw new Error(`the host HIL backend is required here (${requirement.why}) and missing: ${reason}. Every reason: ${loaded.reasons.join('; ')}`);
    }
    return { available: false, reason };
  }
  if (kind === 'host') return { available: true, reason: '' };
  return cuda();
}

export function backendAvailability(kind: 'host' | 'cuda'): { available: boolean; reason: string } {
  return availabilityOf(kind, loadHil(), hostRequirement(process.env), cudaStatus);
}
