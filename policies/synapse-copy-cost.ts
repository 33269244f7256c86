/**
 * What SynapseVM may copy per layer without outrunning compute: a copy of `bytes` from tier t into
 * HBM costs α_t + bytes / β_t (µs), and the copies issued for one layer must fit in the layer's
 * expected compute time T, so that in steady state the memory stream keeps pace with the compute
 * stream. With α = 0 and one tier this is the byte cap bytes ≤ β · T. α, β and T come from the
 * options where given, else from the setup's hardware facts (PolicySetup.hardware); with neither,
 * T is unbounded (nothing caps the copies).
 */
import type { PolicySetup } from './policy.js';

export interface CopyCostOptions {
  /** > 0: β of every tier, GB/s (else the hardware facts) */
  link_GBps: number;
  /** ≥ 0: α of every tier, µs (else the hardware facts) */
  copy_alpha_us: number;
  /** > 0: T, µs (else the hardware facts) */
  layer_us: number;
}

export class CopyCost {
  /** per tier: α (µs) and β (bytes per µs) */
  readonly alphaUs: Float64Array;
  readonly bytesPerUs: Float64Array;
  /** expected compute time of a layer, µs (Infinity: unbounded) */
  readonly layerUs: number;

  constructor(setup: Pick<PolicySetup, 'tiers' | 'hardware'>, o: CopyCostOptions) {
    const hw = setup.hardware;
    const T = setup.tiers.length;
    this.alphaUs = new Float64Array(T);
    this.bytesPerUs = new Float64Array(T);
    for (let t = 0; t < T; t++) {
      this.alphaUs[t] = o.copy_alpha_us >= 0 ? o.copy_alpha_us : (hw?.toHbmAlpha_us[t] ?? 0);
      const GBps = o.link_GBps > 0 ? o.link_GBps : (hw?.toHbm_GBps[t] ?? 0);
      this.bytesPerUs[t] = GBps > 0 ? GBps * 1e3 : Infinity;
    }
    this.layerUs = o.layer_us > 0 ? o.layer_us : hw && hw.layerCompute_us > 0 ? hw.layerCompute_us : Infinity;
  }

  /** µs of one copy of `bytes` between tier t and HBM */
  of(tier: number, bytes: number): number {
    return this.alphaUs[tier] + bytes / this.bytesPerUs[tier];
  }
}
