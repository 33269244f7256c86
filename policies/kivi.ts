/**
 * KIVI (Liu et al., "KIVI: A Tuning-Free Asymmetric 2bit Quantization for KV Cache", ICML 2024):
 * keys quantized per channel and values per token, asymmetric, b = 2 bits, group G = 32, the last
 * R = 128 tokens kept in FP16 (the residual) and quantized once they leave it. Nothing is evicted:
 * every token stays attended, at 2 bits.
 *
 * Here at block granularity: a block is quantized (in place, in HBM) once all its tokens are older
 * than the last R tokens. If the quantized cache still exceeds the layer's HBM budget, the oldest
 * quantized blocks are offloaded to DRAM at 2 bits and streamed back one layer ahead (KIVI itself
 * assumes everything fits in HBM). Quality: the error table at (2 bits, G = 32, no rotation) — a
 * conservative choice, since per-channel key grouping already isolates outlier channels. Storage
 * bytes follow the run's group_size (pass --group-size 32 for KIVI's exact scale overhead).
 */
import { checkLowerTier } from './lower-tier.js';
import type { Actions, PolicyDefinition, PolicyView } from './policy.js';

interface Options extends Record<string, unknown> {
  bits: number;
  group_size: number;
  residual_tokens: number;
  offload_tier: string;
}

export const kivi: PolicyDefinition<Options> = {
  name: 'kivi',
  description:
    'KIVI: asymmetric 2-bit KV quantization (keys per channel, values per token, group 32); the last 128 tokens stay FP16; nothing evicted; blocks beyond the HBM budget are offloaded at 2 bits and streamed one layer ahead.',
  source: 'Liu et al., KIVI: A Tuning-Free Asymmetric 2bit Quantization for KV Cache, ICML 2024 (b = 2, G = 32, R = 128)',
  options: [
    { name: 'bits', type: 'integer', default: 2, min: 2, max: 8, description: 'precision of quantized blocks (2, 4 or 8)' },
    { name: 'group_size', type: 'integer', default: 32, min: 1, description: 'quantization group (for the error table)' },
    { name: 'residual_tokens', type: 'integer', default: 128, min: 0, description: 'the most recent tokens kept in FP16' },
    { name: 'offload_tier', type: 'string', default: 'dram', description: 'tier for quantized blocks that do not fit the HBM budget' },
  ],
  create(o, setup) {
    if (![8, 4, 2].includes(o.bits)) throw new Error(`policy kivi: option bits must be 2, 4 or 8 (got ${o.bits})`);
    checkLowerTier('kivi', 'offload_tier', o.offload_tier, setup.tiers);
    const L = setup.layers;
    const B = setup.blockSize;
    const quantizedUpTo = new Int32Array(L);
    const offloadedUpTo = new Int32Array(L);
    return {
      name: 'kivi',
      quant: { groupSize: o.group_size, rotation: false },
      decide(v: PolicyView, act: Actions) {
        const l = v.layer;
        const cache = v.cache;
        // blocks whose tokens all left the residual window: quantize where they are (oldest first)
        const ctx = v.step < 0 ? setup.header.prompt_tokens : v.contextTokens;
        const firstResident = Math.floor(Math.max(0, ctx - o.residual_tokens) / B);
        for (let b = quantizedUpTo[l]; b < Math.min(firstResident, cache.created[l]); b++) {
          const t = cache.tierOf(l, b);
          if (t >= 0 && cache.bitsOf(l, b) > o.bits) act.demote(l, b, cache.tierNames[t], o.bits);
        }
        quantizedUpTo[l] = Math.max(quantizedUpTo[l], Math.min(firstResident, cache.created[l]));
        // the layer's HBM budget in bytes: offload the oldest blocks beyond it
        const limit = Math.max(1, v.budgetBlocks) * cache.bytesOf(16);
        const incoming = v.newBlock ? cache.bytesOf(16) : 0;
        for (let b = offloadedUpTo[l]; b < cache.created[l] && cache.bytesIn(l, 0) + incoming > limit; b++) {
          if (cache.tierOf(l, b) === 0) act.demote(l, b, o.offload_tier, cache.bitsOf(l, b));
          offloadedUpTo[l] = b + 1;
        }
        if (v.step >= 0) act.prefetchOffloaded(l + 1 < L ? l + 1 : 0);
      },
      observe() {},
    };
  },
};
