/**
 * Attention trace format v1 — types shared by the writer, the streaming reader, the generator,
 * `trace stats` and the replay driver. The byte layout is documented in traces/FORMAT.md.
 */
export const TRACE_FORMAT = 'kvtier-attention-trace';
export const TRACE_VERSION = 1;

export type TraceEncoding = 'dense' | 'topk';

export interface TraceHeader {
  format: typeof TRACE_FORMAT;
  version: typeof TRACE_VERSION;
  /** model preset name (or a free name for captured models) */
  model: string;
  layers: number;
  /** KV blocks are block_size tokens */
  block_size: number;
  prompt_tokens: number;
  /** decode steps in the trace */
  steps: number;
  /** number of KV-head groups recorded (1 = mass averaged over heads) */
  kv_groups: number;
  encoding: TraceEncoding;
  /** for topk: number of blocks listed per (step, layer); the rest is `remainder` */
  topk?: number;
  /** where the trace came from: generator name + seed + parameters, or capture details */
  provenance: Record<string, unknown>;
}

/**
 * One layer at one decode step. The context at decode step s holds prompt_tokens + s + 1 tokens
 * (the new token attends to itself), i.e. nBlocks = ceil(context / block_size).
 */
export interface LayerAttention {
  nBlocks: number;
  /** topk: block indices of `mass` entries (ascending not required); dense: null (mass[i] is block i) */
  idx: Uint32Array | null;
  /** attention mass per listed block (sum over the step's query, head-averaged), each in [0,1] */
  mass: Float32Array;
  /** mass on the blocks not listed (topk only; 0 for dense). Spread evenly over them. */
  remainder: number;
  /** key norms given for blocks normFrom .. normFrom + norms.length - 1 (new or changed blocks) */
  normFrom: number;
  norms: Float32Array;
}

export interface TraceStep {
  step: number;
  contextTokens: number;
  layers: LayerAttention[];
}

export function contextTokensAt(h: Pick<TraceHeader, 'prompt_tokens'>, step: number): number {
  return h.prompt_tokens + step + 1;
}

export function blocksFor(tokens: number, blockSize: number): number {
  return Math.ceil(tokens / blockSize);
}
