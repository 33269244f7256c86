/**
 * The recorded work of a run, as the replay driver hands it to the executor: per decode step, the
 * moves, stages and layers in issue order, with every block named. The HIL layer records the whole
 * run first (policies decide from attention, never from time, so recording changes nothing), then
 * lowers it to real copies and kernels (lower-plan.ts) and runs them (run-plan.ts).
 */
import type { TransferReason } from '../../sim/executor.js';

export interface PlannedMove {
  kind: 'move';
  layer: number;
  fromTier: number;
  toTier: number;
  fromBits: number;
  toBits: number;
  blocks: number[];
  reason: TransferReason;
}

export interface PlannedStage {
  kind: 'stage';
  layer: number;
  fromTier: number;
  /** the offloaded blocks copied, with their precision at the source */
  blocks: number[];
  bits: number[];
}

export interface PlannedLayer {
  kind: 'layer';
  layer: number;
  /** tokens the attention reads */
  tokens: number;
  /** attended blocks in context order (the last one may be partial) */
  attended: Int32Array;
  /** blocks created in HBM since this layer last ran (their KV is written before the attention) */
  created: number[];
  /** blocks evicted since this layer last ran (their HBM slots are freed) */
  dropped: number[];
}

export type PlannedOp = PlannedMove | PlannedStage | PlannedLayer;

export interface PlannedStep {
  step: number;
  contextTokens: number;
  ops: PlannedOp[];
}

/** Where every block was when decoding began (after the untimed prefill): tier and bits; -1 = not created, -2 = evicted. */
export interface InitialPlacement {
  layers: number;
  maxBlocks: number;
  tier: Int8Array;
  bits: Int8Array;
}

export interface RecordedPlan {
  initial: InitialPlacement;
  steps: PlannedStep[];
}
