/**
 * NTransformer (seed system) as one policy: SLEP weight streaming (slep.ts, slep-weights.ts) +
 * RotateKV (Walsh–Hadamard-rotated K/V, rotation timed by the executor) + adaptive per-layer KV
 * precision.
 *
 * Per-layer precision: each layer's sensitivity is measured on the trace as the run goes — the
 * running mean over observed steps of the layer's attention entropy H (per KV group, averaged over
 * the groups: policies/attention-entropy.ts) — and turned into a weight w = exp(−H/2). The reason:
 * a layer's attention output Σ_j p_j v_j with independent relative errors e on its blocks has a
 * relative error of about e·sqrt(Σ_j p_j²); for attention spread evenly over exp(H) blocks that is
 * e·exp(−H/2). A sharp layer (low H) leans on few blocks whose errors do not average out, so it is
 * more sensitive; a broad one averages them down. e(bits) is the quality model's error table, given
 * by the caller as setup.quantRelError (the simulator's: sim/quality/error-table.ts, measured rotated
 * entries with rotation) at the run's group size.
 * Bits per layer (16/8/4/2) are assigned under the HBM KV byte budget by a greedy on marginal
 * error per byte (policies/layer-bits.ts), once per step before layer 0 (and at the end of prefill,
 * when every layer has been observed), counting the sink block and the block being written at FP16.
 * A layer's bits only fall (quantized KV cannot be restored). When even 2 bits everywhere exceed
 * the budget, the oldest blocks beyond each layer's equal share go to the offload tier (as slep).
 *
 * Stand-ins and limits: w = exp(−H/2) replaces the participation ratio 1/Σp² by the entropy's
 * exp(H) (equal for attention uniform over a subset); the quality meter's quant_error is
 * mass-weighted (Σ p_j e_j), so it does not credit the averaging this weight assumes; RotateKV's
 * adaptive rotation is a plain Hadamard transform.
 */
import { groupEntropy } from './attention-entropy.js';
import { checkLowerTier } from './lower-tier.js';
import { allocateLayerBits, LADDER } from './layer-bits.js';
import type { Actions, Observation, PolicyDefinition, PolicyView, QuantRelError } from './policy.js';
import { SLEP_WEIGHT_OPTIONS, slepWeights, type SlepWeightOptions } from './slep-weights.js';
import type { CacheView } from './cache-view.js';

interface Options extends SlepWeightOptions, Record<string, unknown> {
  rotation: boolean;
  min_bits: number;
  offload_tier: string;
}

export const ntransformer: PolicyDefinition<Options> = {
  name: 'ntransformer',
  description:
    'NTransformer: SLEP weight streaming (INT4 layers by default, 2 HBM slots) + RotateKV (Hadamard-rotated K/V, rotation timed) + per-layer KV bits (16/8/4/2) under the HBM KV budget: greedy by marginal error per byte, error = exp(-H/2) x table error, H the layer\'s observed attention entropy. Stand-ins: exp(H) for the participation ratio; quant_error (mass-weighted) does not credit the averaging the weight assumes; plain Hadamard for RotateKV\'s adaptive rotation.',
  source: 'NTransformer (seed system: SLEP, RotateKV, adaptive per-layer precision); RotateKV: Su et al., 2025',
  options: [
    ...SLEP_WEIGHT_OPTIONS.map((o) => (o.name === 'weight_bits' ? { ...o, default: 4 } : o)),
    { name: 'rotation', type: 'boolean', default: true, description: 'Walsh-Hadamard rotation of K/V before quantization (RotateKV)' },
    { name: 'min_bits', type: 'integer', default: 2, min: 2, max: 16, description: 'lowest KV precision a layer may get (16, 8, 4 or 2)' },
    { name: 'offload_tier', type: 'string', default: 'dram', description: 'tier for KV blocks beyond the budget when 2 bits everywhere do not fit' },
  ],
  create(o, setup) {
    const weights = slepWeights('ntransformer', o, setup);
    checkLowerTier('ntransformer', 'offload_tier', o.offload_tier, setup.tiers);
    if (setup.quantRelError === undefined) throw new Error('policy ntransformer: needs the quality model\'s quantization error (setup.quantRelError), which the caller gives');
    const relError: QuantRelError = setup.quantRelError;
    if (!(LADDER as readonly number[]).includes(o.min_bits)) throw new Error(`policy ntransformer: option min_bits must be one of ${LADDER.join(', ')} (got ${o.min_bits})`);
    const L = setup.layers;
    const entropySum = new Float64Array(L);
    const entropyN = new Int32Array(L);
    const bits = new Array<number>(L).fill(16);
    /** per layer: blocks below this were quantized to bits[l] (block 0, the sink, stays FP16) */
    const quantizedUpTo = new Int32Array(L).fill(1);
    const appliedBits = new Array<number>(L).fill(16);
    const offloadedUpTo = new Int32Array(L);
    let limit: number[] = new Array<number>(L).fill(Infinity);
    let lastAllocStep = -2;
    let allocations = 0;
    let infeasible = 0;
    let errorAt: ((b: number) => number) | null = null;

    function sensitivity(l: number): number {
      return entropyN[l] > 0 ? Math.exp(-entropySum[l] / entropyN[l] / 2) : 1;
    }

    function allocate(v: PolicyView): void {
      const cache = v.cache;
      if (!errorAt) {
        errorAt = (b: number) => relError(b, cache.groupSize, o.rotation);
      }
      const n = v.nBlocks;
      const fp16Blocks = Math.min(n, 2); // the sink and the block being written
      const q = n - fp16Blocks;
      const budget = L * Math.max(1, v.budgetBlocks) * cache.bytesOf(16);
      const bytesAt = (_l: number, b: number) => fp16Blocks * cache.bytesOf(16) + q * cache.bytesOf(b);
      const r = allocateLayerBits({
        sensitivity: Array.from({ length: L }, (_, l) => sensitivity(l)),
        current: bits,
        bytesAt,
        errorAt,
        budget,
        minBits: o.min_bits,
      });
      for (let l = 0; l < L; l++) bits[l] = r.bits[l];
      limit = r.feasible ? bits.map((b, l) => bytesAt(l, b)) : new Array<number>(L).fill(budget / L);
      allocations++;
      if (!r.feasible) infeasible++;
    }

    /** quantize layer l's complete blocks (but the sink) to bits[l] where they live; block nBlocks-1 is being written */
    function quantizeLayer(l: number, nBlocks: number, cache: CacheView, act: Actions): void {
      if (bits[l] >= 16) return;
      const from = bits[l] < appliedBits[l] ? 1 : quantizedUpTo[l];
      const upTo = Math.min(cache.created[l], nBlocks - 1);
      for (let b = from; b < upTo; b++) {
        const t = cache.tierOf(l, b);
        if (t >= 0 && cache.bitsOf(l, b) > bits[l]) act.demote(l, b, cache.tierNames[t], bits[l]);
      }
      quantizedUpTo[l] = Math.max(quantizedUpTo[l], upTo);
      appliedBits[l] = bits[l];
    }

    /** beyond layer l's planned bytes (or its equal share when nothing fits), the oldest blocks go to the offload tier */
    function spillLayer(l: number, newBlock: boolean, cache: CacheView, act: Actions): void {
      const incoming = newBlock ? cache.bytesOf(16) : 0;
      for (let b = Math.max(1, offloadedUpTo[l]); b < cache.created[l] && cache.bytesIn(l, 0) + incoming > limit[l]; b++) {
        if (cache.tierOf(l, b) === 0) act.demote(l, b, o.offload_tier, cache.bitsOf(l, b));
        offloadedUpTo[l] = b + 1;
      }
    }

    return {
      name: 'ntransformer',
      weights,
      quant: { rotation: o.rotation },
      decide(v: PolicyView, act: Actions) {
        const l = v.layer;
        const cache = v.cache;
        if (v.step < 0) {
          // prefill: every layer has been observed once the last one decides
          if (l !== L - 1) return;
          allocate(v);
          for (let k = 0; k < L; k++) {
            quantizeLayer(k, v.nBlocks, cache, act);
            spillLayer(k, false, cache, act);
          }
          return;
        }
        if (l === 0 && lastAllocStep !== v.step) {
          allocate(v);
          lastAllocStep = v.step;
        }
        quantizeLayer(l, v.nBlocks, cache, act);
        spillLayer(l, v.newBlock, cache, act);
        act.prefetchOffloaded(l + 1 < L ? l + 1 : 0);
      },
      observe(obs: Observation) {
        let h = 0;
        for (const g of obs.groups) h += groupEntropy(g, obs.attended, obs.nBlocks, obs.attendedCount);
        entropySum[obs.layer] += h / obs.groups.length;
        entropyN[obs.layer]++;
      },
      report() {
        const out: Record<string, number> = { allocations, infeasible_allocations: infeasible };
        let sum = 0;
        for (const b of LADDER) out[`layers_at_${b}_bits`] = bits.filter((x) => x === b).length;
        for (const b of bits) sum += b;
        out.mean_layer_bits = sum / L;
        return out;
      },
    };
  },
};
