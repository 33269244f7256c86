/**
 * The lowered plan: what lowering (lower-plan.ts) hands to the run (run-plan.ts). Regions, the ops
 * of every step in issue order, the timing marks of every layer, and the bytes every block starts
 * and ends with.
 */
import type { BlockGeometry } from '../kv-format.js';
import type { FenceOp, StreamIx } from './fences.js';

/** weights: the streamed layers' weights in pinned host memory; wslots: their HBM slots (weight-slots.ts) */
export type RegionName = 'arena' | 'dram' | 'cxl' | 'fresh' | 'scratch' | 'weights' | 'wslots';

export type LowOp =
  | FenceOp
  | { o: 'copy'; s: StreamIx; dst: RegionName; dstOff: number; src: RegionName; srcOff: number; bytes: number }
  | { o: 'quant'; src: RegionName; srcOff: number; dst: RegionName; dstOff: number; bits: 2 | 3 | 4 | 8 }
  | { o: 'dequant'; src: RegionName; srcOff: number; dst: RegionName; dstOff: number; bits: 2 | 3 | 4 | 8 }
  | { o: 'mark'; s: StreamIx; id: number }
  /** uniform: every table entry has these bits (the kernel may then run a path made for that precision), else 0 */
  | { o: 'attn'; layer: number; tableOff: number; tokens: number; uniform: number }
  /** slot: the HBM weight slot a streamed layer's projections read (absent: its resident weights) */
  | { o: 'gemv'; layer: number; lmHead: boolean; slot?: number }
  /** RotateKV: Walsh-Hadamard rotation (rows of head_dim) of the query before the attention, of its output after it (V was rotated), or of a block's FP16 K/V in place */
  | { o: 'rotate'; s: StreamIx; what: 'q' | 'out' | 'block'; region?: RegionName; offset?: number }
  /** a block converted between widths on the host, from one host slot to another (host-convert.ts): the host waits for the memory stream's copies of those slots */
  | { o: 'hostConvert'; src: RegionName; srcOff: number; fromBits: number; dst: RegionName; dstOff: number; toBits: number }
  | { o: 'fileRead'; offset: number; bytes: number }
  | { o: 'fileWrite'; offset: number; bytes: number }
  | { o: 'fileJoin' }
  /** the host waits until the compute stream has finished all work issued so far (the previous step's) */
  | { o: 'hostWaitCompute' };

/** weight streaming as lowered (weight-slots.ts) */
export interface StreamedWeights {
  buffers: number;
  resident: number;
  layerBytes: number;
  /** bytes between slots (and between host layers): layerBytes rounded up to 4 KiB */
  strideBytes: number;
  hostLayers: number;
  /** link keys the copies are counted on (host tier -> HBM) */
  keys: string[];
}

export interface LayerMarks {
  layer: number;
  /** compute stream reaches the layer, done waiting, attention done, projections done */
  pre: number;
  ready: number;
  attn: number;
  done: number;
}

export interface LowStep {
  step: number;
  contextTokens: number;
  ops: LowOp[];
  layers: LayerMarks[];
  /** memory-stream busy intervals (mark ids) */
  memSpans: [number, number, string][];
  bytes: Record<string, number>;
}

export interface InitialBlock {
  layer: number;
  block: number;
  bits: number;
  region: RegionName;
  offset: number;
  /** also written to the file tier at this offset */
  file: boolean;
}

export interface LoweredPlan {
  geometry: BlockGeometry;
  slotBytes: number;
  ringBytes: number;
  arenaBytes: number;
  hostBytes: number;
  usesCxl: boolean;
  /** whether the file is used (NVMe blocks, and HDD ones: no HDD here, they live in the same file) */
  usesNvme: boolean;
  /** whether any block lived in an HDD tier (on the NVMe file) */
  usesHdd: boolean;
  steps: LowStep[];
  tables: Uint8Array;
  initial: InitialBlock[];
  /** blocks written during decode, in fresh-region order (their 16-bit content) */
  fresh: { layer: number; block: number }[];
  marks: number;
  fences: [number, number];
  scratchBytes: number;
  /** where every block is after the last step (tier, bits, arena offset of resident ones) */
  /** via: per block index (l * maxBlocks + b) converted between quantized widths, the widths it held before (BlockPlaces.via) */
  final: { tier: Int8Array; bits: Int8Array; slot: Float64Array; via: Map<number, number[]> };
  layers: number;
  maxBlocks: number;
  /** host region per tier index (dram, cxl; nvme blocks are read through their dram slot) */
  hostRegionOf: (RegionName | undefined)[];
  nvmeTier: number;
  /** tiers whose blocks live in the file (read through their DRAM slot) */
  fileTiers: number[];
  /** weight streaming, where the policy asks for it */
  weights?: StreamedWeights;
  /** RotateKV: every block's K/V is stored rotated (as written and as verified), q and the output rotated per layer */
  rotation: boolean;
}
