/** Deep copy of a TraceStep, for keeping a step the reader handed out beyond the next read. */
import type { TraceStep } from './format.js';

export function cloneStep(s: TraceStep): TraceStep {
  return {
    step: s.step,
    contextTokens: s.contextTokens,
    layers: s.layers.map((a) => ({
      nBlocks: a.nBlocks,
      idx: a.idx === null ? null : a.idx.slice(),
      mass: a.mass.slice(),
      remainder: a.remainder,
      normFrom: a.normFrom,
      norms: a.norms.slice(),
    })),
  };
}
