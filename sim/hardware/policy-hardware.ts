/**
 * The plain numbers a policy may know about the machine (PolicySetup.hardware): per tier, the speed
 * of a copy into HBM over the topology's route (narrowest resource, alphas while a kernel runs), and
 * the compute time of one decode layer that attends the HBM budget at FP16, by the same roofline the
 * simulated executor times kernels with.
 */
import { Engine } from '../engine.js';
import { attentionTimeUs, linearTimeUs } from '../roofline.js';
import { Topology } from '../topology.js';
import { kvBytes, kvElementsPerTokenLayer, type ModelSpec } from '../models/model.js';
import type { PolicyHardware } from '../../policies/policy.js';
import type { HardwareProfile } from './profile.js';

export function policyHardware(hw: HardwareProfile, model: ModelSpec, tierNames: readonly string[], budgetTokens: number): PolicyHardware {
  const topo = new Topology(new Engine(), hw);
  const hbm = tierNames[0];
  const toHbm_GBps = tierNames.map((t, i) => (i === 0 ? 0 : Math.min(...topo.route(t, hbm).resources.map((r) => r.capacity)) / 1e3));
  const toHbmAlpha_us = tierNames.map((t, i) => (i === 0 ? 0 : topo.route(t, hbm).alpha_under_compute_us));
  const group = model.attention === 'mla' ? model.q_heads : model.q_heads / model.kv_heads;
  const flops = 2 * group * kvElementsPerTokenLayer(model) * budgetTokens;
  const attention = attentionTimeUs(hw.gpu, budgetTokens, kvBytes(model, budgetTokens, 16), flops);
  const linear = linearTimeUs(hw.gpu, model.weight_bytes_per_layer, model.flops_per_token_per_layer);
  return { toHbm_GBps, toHbmAlpha_us, layerCompute_us: attention + linear };
}
