/**
 * NTransformer SLEP (seed system, kvtier issue 3): streaming layer execution — the model's weights
 * live in host memory and are streamed over PCIe layer by layer into HBM with double buffering
 * (layer l+1's weights are copied while layer l computes; a buffer is reused once its layer's linear
 * kernel is done), so a model larger than HBM runs; the KV cache stays resident in HBM up to the
 * budget, the oldest blocks beyond it tiered to DRAM and streamed one layer ahead.
 *
 * KV precision option RotateKV (Su et al., "RotateKV: Accurate and Robust 2-Bit KV Cache Quantization
 * for LLMs via Outlier-Aware Adaptive Rotations", 2025): keys and values Walsh–Hadamard-rotated, then
 * quantized to 4 or 2 bits (group 128); the attention-sink block and the block being written stay
 * FP16. The rotation is what the quality measures see (the error table's rotated entries); its cost
 * (a fast Walsh–Hadamard transform, O(d log d) per vector) is folded into the attention kernel time.
 * The timing of the weight stream is the executor's (sim-executor.ts `weightStreaming`).
 */
import { checkLowerTier } from './lower-tier.js';
import type { Actions, PolicyDefinition, PolicyView } from './policy.js';

interface Options extends Record<string, unknown> {
  weights_tier: string;
  buffers: number;
  kv_precision: string;
  offload_tier: string;
}

const BITS: Record<string, number> = { fp16: 16, 'rotatekv-4': 4, 'rotatekv-2': 2 };

export const slep: PolicyDefinition<Options> = {
  name: 'slep',
  description:
    'NTransformer SLEP: weights streamed layer by layer from DRAM over PCIe with double buffering; KV resident in HBM up to the budget, oldest blocks tiered to DRAM and streamed; KV precision option RotateKV (Walsh-Hadamard rotation, 4 or 2 bits).',
  source: 'NTransformer SLEP (seed system, kvtier issue 3); RotateKV: Su et al., 2025 (Hadamard-rotated 2-4-bit KV)',
  options: [
    { name: 'weights_tier', type: 'string', default: 'dram', description: 'tier the weights are streamed from' },
    { name: 'buffers', type: 'integer', default: 2, min: 1, description: 'HBM layer buffers for weights (2 = double buffering)' },
    { name: 'kv_precision', type: 'string', default: 'fp16', choices: Object.keys(BITS), description: 'KV precision: fp16, or RotateKV at 4 or 2 bits' },
    { name: 'offload_tier', type: 'string', default: 'dram', description: 'tier for KV blocks beyond the HBM budget' },
  ],
  create(o, setup) {
    for (const [opt, t] of [['weights_tier', o.weights_tier], ['offload_tier', o.offload_tier]] as const) {
      checkLowerTier('slep', opt, t, setup.tiers);
    }
    const L = setup.layers;
    const bits = BITS[o.kv_precision];
    const quantizedUpTo = new Int32Array(L).fill(1); // block 0 (the sink) stays FP16
    const offloadedUpTo = new Int32Array(L);
    return {
      name: 'slep',
      weights: { tier: o.weights_tier, buffers: o.buffers },
      quant: { rotation: true },
      decide(v: PolicyView, act: Actions) {
        const l = v.layer;
        const cache = v.cache;
        if (bits < 16) {
          // every complete block but the sink, quantized where it lives
          for (let b = quantizedUpTo[l]; b < cache.created[l]; b++) {
            const t = cache.tierOf(l, b);
            if (t >= 0 && cache.bitsOf(l, b) > bits) act.demote(l, b, cache.tierNames[t], bits);
          }
          quantizedUpTo[l] = Math.max(quantizedUpTo[l], cache.created[l]);
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
