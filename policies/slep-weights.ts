/**
 * The weight-streaming options of SLEP-style policies (slep, ntransformer): which tier the layers
 * stream from, how many HBM slots, the weights' storage precision, and how many layers stay
 * resident. Turns them into the executor's WeightStreaming with byte sizes derived from the model.
 */
import { layerWeightBytes, otherWeightBytes, WEIGHT_BITS, type WeightFormat } from './weight-bytes.js';
import type { WeightStreaming } from './weight-streaming.js';
import { checkLowerTier } from './lower-tier.js';
import type { OptionSpec, PolicySetup } from './policy.js';

export interface SlepWeightOptions {
  weights_tier: string;
  buffers: number;
  weight_bits: number;
  weight_group_size: number;
  weight_scale_bytes: number;
  resident_layers: number;
}

export const SLEP_WEIGHT_OPTIONS: OptionSpec[] = [
  { name: 'weights_tier', type: 'string', default: 'dram', description: 'tier the weights are streamed from' },
  { name: 'buffers', type: 'integer', default: 2, min: 1, description: 'HBM layer slots for streamed weights (2 = double buffering)' },
  { name: 'weight_bits', type: 'integer', default: 16, min: 4, max: 16, description: `weight storage precision: ${WEIGHT_BITS.join(', ')} bits (8 and 4: group-quantized)` },
  { name: 'weight_group_size', type: 'integer', default: 128, min: 1, description: 'weights per quantization group (weight_bits 8 or 4)' },
  { name: 'weight_scale_bytes', type: 'integer', default: 4, min: 0, description: 'bytes per weight group: 4 = FP16 scale + FP16 zero, 2 = FP16 scale, 0 = not counted' },
  { name: 'resident_layers', type: 'integer', default: 0, min: 0, description: 'layers 0..n-1 kept in HBM, never streamed' },
];

/** The executor's weight streaming for these options (throws naming the option on a bad value). */
export function slepWeights(policy: string, o: SlepWeightOptions, setup: Pick<PolicySetup, 'model' | 'tiers' | 'layers'>): WeightStreaming {
  checkLowerTier(policy, 'weights_tier', o.weights_tier, setup.tiers);
  if (!(WEIGHT_BITS as readonly number[]).includes(o.weight_bits)) {
    throw new Error(`policy ${policy}: option weight_bits must be one of ${WEIGHT_BITS.join(', ')} (got ${o.weight_bits})`);
  }
  if (o.resident_layers > setup.layers) {
    throw new Error(`policy ${policy}: option resident_layers must be <= ${setup.layers} (the model's layers; got ${o.resident_layers})`);
  }
  const f: WeightFormat = { bits: o.weight_bits, groupSize: o.weight_group_size, scaleBytes: o.weight_scale_bytes };
  return {
    tier: o.weights_tier,
    buffers: o.buffers,
    layerBytes: layerWeightBytes(setup.model, f),
    otherBytes: otherWeightBytes(setup.model, f),
    residentLayers: o.resident_layers,
  };
}
