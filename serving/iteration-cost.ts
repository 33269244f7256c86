/**
 * Time of one continuous-batching iteration on the GPU, by roofline per layer (sim/roofline.ts):
 * every layer reads its weights once and the KV of every token the batch attends to, writes the KV
 * of the new tokens, and does 2 x params FLOPs per token plus attention FLOPs of
 * 4 x q_heads x head_dim per (query token, context token) pair (QK^T and AV).
 * Weights outside the layers (embeddings, LM head) are counted as read once per iteration; their
 * FLOPs are left out.
 */
import type { GpuSpec } from '../sim/hardware/profile.js';
import { kvBytesPerToken } from '../sim/models/kv-bytes-per-token.js';
import type { ModelSpec } from '../sim/models/model.js';
import { kernelTimeUs } from '../sim/roofline.js';

/** What one iteration does, summed over its requests. */
export interface IterationWork {
  /** tokens processed (prefill chunk tokens + one per decoding request) */
  tokens: number;
  /** (query token, context token) pairs attended, over all requests */
  pairs: number;
  /** tokens of KV already in HBM that the batch reads */
  kvReadTokens: number;
}

export class IterationCost {
  readonly layers: number;
  readonly weightBytes: number;
  readonly kvBytesPerToken: number;
  readonly flopsPerToken: number;
  readonly flopsPerPair: number;

  constructor(model: ModelSpec, private readonly gpu: GpuSpec) {
    this.layers = model.layers;
    this.weightBytes = model.layers * model.weight_bytes_per_layer + model.other_weight_bytes;
    this.kvBytesPerToken = kvBytesPerToken(model, 16);
    this.flopsPerToken = model.layers * model.flops_per_token_per_layer;
    this.flopsPerPair = 4 * model.q_heads * model.head_dim * model.layers;
  }

  timeUs(w: IterationWork): number {
    const bytes = this.weightBytes + (w.kvReadTokens + w.tokens) * this.kvBytesPerToken;
    const flops = w.tokens * this.flopsPerToken + w.pairs * this.flopsPerPair;
    const L = this.layers;
    return L * kernelTimeUs(this.gpu, bytes / L, flops / L);
  }
}

/** Attention pairs of a prefill chunk of `chunk` tokens starting at position `start` (causal). */
export function prefillPairs(start: number, chunk: number): number {
  return chunk * start + (chunk * (chunk + 1)) / 2;
}
