/**
 * NTransformer SLEP (seed system): streaming layer execution — the model's weights live in host
 * memory and are copied over PCIe layer by layer into HBM slots (two slots = double buffering: layer
 * l+1's weights copy while layer l computes; a slot is reused once its layer's linear kernel is done),
 * so a model larger than HBM runs. The HBM check counts only the slots, the layers kept resident
 * (resident_layers), the weights outside the layers, the KV budget and the GPU's stated reserve
 * (sim/weight-streaming.ts). Weights may be stored at 16, 8 or 4 bits (group-quantized, scale bytes
 * stated: policies/weight-bytes.ts); the linear kernels then read that many bytes.
 *
 * The KV cache stays resident in HBM up to the budget, the oldest blocks beyond it tiered to DRAM and
 * streamed one layer ahead. KV precision option: plain int8/4/2 or RotateKV (Su et al., "RotateKV:
 * Accurate and Robust 2-Bit KV Cache Quantization for LLMs via Outlier-Aware Adaptive Rotations",
 * 2025): keys and values Walsh–Hadamard-rotated, then quantized; the sink block and the block being
 * written stay FP16. With rotation the quality measures take the error table's rotated entries
 * (measured on the H100: sim/quality/measured-table.ts) and the executor times a fast Walsh–Hadamard
 * transform of the token's K/V and of q per layer (sim/rotation-cost.ts).
 *
 * Stand-ins and where the simulator differs from the seed's back-of-envelope (docs/seed-ntransformer.md):
 * each layer copy pays the link's alpha and runs at the preset's PCIe rate (not a round 25 GB/s);
 * group scales add bytes (weight_scale_bytes = 0 reproduces the seed's 4.0 bits per weight); compute
 * is hidden under the copies only where it is shorter; the first step also pays the pipeline's fill.
 * RotateKV's adaptive (outlier-aware) rotation is a plain Walsh–Hadamard transform here.
 */
import { checkLowerTier } from './lower-tier.js';
import { KV_PRECISIONS } from './kv-precision.js';
import type { Actions, PolicyDefinition, PolicyView } from './policy.js';
import { SLEP_WEIGHT_OPTIONS, slepWeights, type SlepWeightOptions } from './slep-weights.js';

interface Options extends SlepWeightOptions, Record<string, unknown> {
  kv_precision: string;
  offload_tier: string;
}

export const slep: PolicyDefinition<Options> = {
  name: 'slep',
  description:
    'NTransformer SLEP: weights streamed layer by layer from DRAM over PCIe into 2 HBM slots (double buffering; HBM counts only the slots, resident layers and non-layer weights); weights at 16/8/4 bits; KV resident in HBM up to the budget, oldest blocks tiered to DRAM and streamed; KV precision int8/4/2 or RotateKV (Walsh-Hadamard rotation timed per layer, rotated errors from the measured table). Stand-in: a plain Hadamard transform for RotateKV\'s adaptive rotation.',
  source: 'NTransformer SLEP (seed system); RotateKV: Su et al., 2025 (Hadamard-rotated 2-4-bit KV)',
  options: [
    ...SLEP_WEIGHT_OPTIONS,
    { name: 'kv_precision', type: 'string', default: 'fp16', choices: Object.keys(KV_PRECISIONS), description: 'KV precision: fp16, int8/4/2, or RotateKV at 8, 4 or 2 bits' },
    { name: 'offload_tier', type: 'string', default: 'dram', description: 'tier for KV blocks beyond the HBM budget' },
  ],
  create(o, setup) {
    const weights = slepWeights('slep', o, setup);
    checkLowerTier('slep', 'offload_tier', o.offload_tier, setup.tiers);
    const L = setup.layers;
    const { bits, rotation } = KV_PRECISIONS[o.kv_precision];
    const quantizedUpTo = new Int32Array(L).fill(1); // block 0 (the sink) stays FP16
    const offloadedUpTo = new Int32Array(L);
    return {
      name: 'slep',
      weights,
      quant: { rotation },
      decide(v: PolicyView, act: Actions) {
        const l = v.layer;
        const cache = v.cache;
        if (bits < 16) {
          // every complete block but the sink, quantized where it lives; block nBlocks-1 is being written
          const upTo = Math.min(cache.created[l], v.nBlocks - 1);
          for (let b = quantizedUpTo[l]; b < upTo; b++) {
            const t = cache.tierOf(l, b);
            if (t >= 0 && cache.bitsOf(l, b) > bits) act.demote(l, b, cache.tierNames[t], bits);
          }
          quantizedUpTo[l] = Math.max(quantizedUpTo[l], upTo);
        }
        const limit = Math.max(1, v.budgetBlocks) * cache.bytesOf(16);
        const incoming = v.newBlock ? cache.bytesOf(16) : 0;
        for (let b = Math.max(1, offloadedUpTo[l]); b < cache.created[l] && cache.bytesIn(l, 0) + incoming > limit; b++) {
          if (cache.tierOf(l, b) === 0) act.demote(l, b, o.offload_tier, cache.bitsOf(l, b));
          offloadedUpTo[l] = b + 1;
        }
        if (v.step >= 0) act.prefetchOffloaded(l + 1 < L ? l + 1 : 0);
      },
      observe() {},
    };
  },
};
