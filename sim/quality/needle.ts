/** The needle of a needle trace (generator provenance), or null for traces without one. */
import type { TraceHeader } from '../../traces/format.js';
import { needleBlock } from '../../traces/generator-params.js';

export interface NeedleInfo {
  block: number;
  /** retrieval layers (the layers whose attention goes to the needle while active) */
  layers: number[];
  fromStep: number;
  steps: number;
}

export function needleOf(header: TraceHeader): NeedleInfo | null {
  const params = (header.provenance as { params?: Record<string, unknown> }).params;
  const n = params?.needle as { depth?: number; from_step?: number; steps?: number; layers?: number[] } | null | undefined;
  if (!params || !n || typeof n.depth !== 'number') return null;
  const block = needleBlock({ depth: n.depth }, { prompt_tokens: header.prompt_tokens, block_size: header.block_size });
  const layers = Array.isArray(n.layers) ? n.layers.filter((l) => Number.isInteger(l) && l >= 0 && l < header.layers) : [];
  return { block, layers, fromStep: n.from_step ?? 0, steps: n.steps ?? header.steps };
}
