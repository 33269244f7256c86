/**
 * Copy batches in the HIL executor's own layout (executor/lower-plan.ts), for calibrating PCIe copies.
 * Host pinned pool: block (l, b) at slot l * M + b. H2D: per layer, runs of consecutive blocks
 * (adjacent host slots, gaps of 1..3 blocks between runs) into one staging-ring extent
 * (staging-ring.ts), block after block, as a fetch. D2H: per layer, blocks from HBM slab slots
 * (slab-allocator.ts) to their host slots, as a demotion. Then, per quantized block size given
 * (smallBytes), single blocks at that size both ways: H2D from their host slots into one ring extent
 * packed at that size, D2H from slab slots of that size; and one H2D batch of the largest quantized
 * size from adjacent host slots (adjacentLabel): every copy's host slot follows the previous copy's,
 * as a fetch of a layer's consecutive quantized blocks issues them (each its own copy: a quantized block
 * does not fill its slot). Copies are coalesced as the executor coalesces them (coalesceCopies): a
 * batch's runs are the copies it issues.
 */
import { align, coalesceCopies } from '../executor/copy-runs.js';
import { SlabAllocator } from '../executor/slab-allocator.js';
import { StagingRing } from '../executor/staging-ring.js';

/** [src offset, dst offset, bytes]; H2D: pool -> arena, D2H: arena -> pool */
export type LayoutCopy = [number, number, number];

export interface LayoutBatch {
  /** 'mixed': D2H and H2D groups (groupDirections), a layer's demotion then its promotion, in turn or every demotion first */
  direction: 'h2d' | 'd2h' | 'mixed';
  label: string;
  /** per layer: the copies of one executor copies() call (one ring extent, or one demotion) */
  groups: LayoutCopy[][];
  /** the direction of each group (every group's is `direction` unless mixed) */
  groupDirections: ('h2d' | 'd2h')[];
  /** D2H <-> H2D changes between consecutive groups */
  switches: number;
  runs: number;
  bytes: number;
  /** issued copies per run length in FP16 blocks (copies of quantized blocks are not counted here) */
  lengths: Record<number, number>;
  /** copies and bytes per direction */
  split: { h2d: { runs: number; bytes: number }; d2h: { runs: number; bytes: number } };
}

export interface LayoutOptions {
  /** bytes of one FP16 block (the executor's 16-bit block) */
  blockBytes: number;
  /** blocks per layer in the host pool (M) */
  maxBlocks: number;
  poolLayers: number;
  layersPerBatch: number;
  runsPerLayer: number;
  slabBytes?: number;
  /**
   * bytes of the model's quantized blocks (INT8, INT4, INT2): single-block batches at each size, both
   * directions, so the per-copy cost is fitted over the sizes the executor copies (a quantized block
   * sits in an FP16-sized host slot and is copied at its own size)
   */
  smallBytes?: number[];
}

export interface LayoutPlan {
  slotBytes: number;
  hostBytes: number;
  ringBytes: number;
  /** ring + the largest slab extent of any D2H batch */
  arenaBytes: number;
  batches: LayoutBatch[];
}

/**
 * The calibration's sizes: 8 layers x 24 runs per batch (a quick calibration takes fewer trials).
 * Every batch of a plan issues the same number of copies, so the fitted alpha per copy carries a
 * batch's fixed cost (the first copy's latency, the events around the batch) divided by that
 * number: batches as large as the executor's (a layer's move is tens to hundreds of copies) keep
 * that share small. With 2 layers x 4 runs per batch the fit read about 0.4-1 us more per copy on
 * an H200 than the executor's large moves paid.
 */
export function layoutOptions(blockBytes: number, maxBlocks: number, smallBytes: number[] = []): LayoutOptions {
  return { blockBytes, maxBlocks, poolLayers: 8, layersPerBatch: 8, runsPerLayer: 24, smallBytes };
}

export const H2D_RUN_LENGTHS = [1, 2, 3, 4, 6, 8, 12, 16];

/** the quantized block sizes a plan times as single-block batches: those of o.smallBytes below the FP16 block, once each, largest first */
export function smallSizes(o: Pick<LayoutOptions, 'blockBytes' | 'smallBytes'>): number[] {
  return [...new Set(o.smallBytes ?? [])].filter((q) => q > 0 && q < o.blockBytes).sort((a, b) => b - a);
}

/** the label of a single-block batch at a quantized size */
export const smallLabel = (bytes: number): string => `single ${bytes}-byte blocks`;

/** the label of the single-block batch from adjacent host slots at a quantized size */
export const adjacentLabel = (bytes: number): string => `adjacent ${smallLabel(bytes)}`;

/** the quantized size, in bytes, of an adjacent-slot batch's label (with or without its direction first); NaN for any other label */
export function adjacentBytes(label: string): number {
  const m = /^(?:(?:h2d|d2h) )?adjacent single (\d+)-byte blocks$/.exec(label);
  return m ? Number(m[1]) : Number.NaN;
}

/** whether a batch label (as the plan has it, or as the copy-batch fit names it: with its direction first) is a single-block batch at a quantized size */
export const isSmallLabel = (label: string): boolean => /^(?:(?:h2d|d2h) )?single \d+-byte blocks$/.test(label);

/** run lengths cycled per layer (each layer starts one further): pure lengths give bytes/run 1..16 blocks, mixes interleave them */
const H2D_MIXES: [string, number[]][] = [
  ...H2D_RUN_LENGTHS.map((r): [string, number[]] => [`runs of ${r}`, [r]]),
  ['mixed 1..16', H2D_RUN_LENGTHS],
  ['mixed short', [1, 1, 2, 1, 3, 1, 2, 4]],
  ['mixed long', [6, 16, 8, 12, 16]],
];

/** [label, run lengths, runs per layer as a multiple of runsPerLayer] */
const D2H_MIXES: [string, number[], number][] = [
  ['single blocks', [1], 1],
  ['single blocks x2', [1], 2],
  ['runs of 2', [2], 1],
  ['runs of 4', [4], 1],
  ['runs of 8', [8], 1],
  ['runs of 16', [16], 1],
  ['singles + runs', [1, 1, 1, 2, 1, 4, 1, 8], 1],
];

/**
 * Mixed batches: per layer a demotion of n single blocks from slab slots to their host slots, then a
 * promotion of n other blocks into the slots just freed (taken last in, first out, as the executor's
 * slab allocator hands them back), so every group changes the copy direction. Measured against the
 * single-direction fits, they give the cost of a direction change on the one memory stream.
 */
export const MIXED_GROUP_BLOCKS = [2, 4, 8, 16, 24];

/**
 * Mixed batches of the same groups in another order: every layer's demotion first, then every layer's
 * promotion (one direction change in all). With the same groups as the alternating batches and 1
 * change where those have 15, they tell the cost per group from the cost per change, which the
 * alternating batches alone give only together.
 */
export const ORDERED_GROUP_BLOCKS = [8, 24];

/** block numbers of one layer: `count` runs with lengths cycled from `mix` (rotated by `rot`), gaps 1..3, within M */
export function placeRuns(mix: number[], rot: number, count: number, M: number): number[][] {
  const runs: number[][] = [];
  let at = rot % 3;
  for (let k = 0; k < count; k++) {
    const r = mix[(k + rot) % mix.length];
    if (at + r > M) break;
    runs.push(Array.from({ length: r }, (_, i) => at + i));
    at += r + 1 + (k % 3);
  }
  return runs;
}

export function layoutBatches(o: LayoutOptions): LayoutPlan {
  const M = o.maxBlocks;
  const B = o.blockBytes;
  const slotBytes = align(B, 4096);
  const slabBytes = Math.max(o.slabBytes ?? 2 << 20, align(B, 16));
  const ringBytes = align(3 * M * B, 1 << 21);
  const ring = new StagingRing(ringBytes);
  const host = (l: number, b: number) => (l * M + b) * slotBytes;
  const batches: LayoutBatch[] = [];
  let slabExtent = 0;
  let layerAt = 0;
  const nextLayers = () => Array.from({ length: o.layersPerBatch }, () => layerAt++ % o.poolLayers);
  // per layer, the blocks of runs cycled from `mix` (or blocksOf(j) for the j-th layer of the batch)
  // copied at `size` bytes each: H2D from their host slots into one ring extent, block after block (the
  // extent let go once the next layer's is taken); D2H from slab slots of that size to their host slots
  const h2d = (label: string, mix: number[], size: number, blocksOf = (j: number) => placeRuns(mix, j, o.runsPerLayer, M).flat()) => {
    const groups: LayoutCopy[][] = [];
    let live = -1;
    nextLayers().forEach((l, j) => {
      const blocks = blocksOf(j);
      const ext = ring.alloc(align(blocks.length * size, 256));
      if (live >= 0) ring.release(live);
      live = ext.offset;
      groups.push(coalesceCopies(blocks.map((b, i): LayoutCopy => [host(l, b), ext.offset + i * size, size])));
    });
    ring.release(live);
    batches.push(summarize('h2d', label, groups, B));
  };
  const d2h = (label: string, mix: number[], times: number, size: number) => {
    const slabs = new SlabAllocator(ringBytes, slabBytes);
    const groups = nextLayers().map((l, j) => coalesceCopies(placeRuns(mix, j, o.runsPerLayer * times, M).flat().map((b): LayoutCopy => [slabs.alloc(size).offset, host(l, b), size])));
    slabExtent = Math.max(slabExtent, slabs.extent);
    batches.push(summarize('d2h', label, groups, B));
  };
  for (const [label, mix] of H2D_MIXES) h2d(label, mix, B);
  for (const [label, mix, times] of D2H_MIXES) d2h(label, mix, times, B);
  for (const n of MIXED_GROUP_BLOCKS) {
    // 2n blocks of a layer, every other one (no two adjacent host slots); a smaller pool skips the larger groups
    if (4 * n > M) continue;
    const slabs = new SlabAllocator(ringBytes, slabBytes);
    const groups: LayoutCopy[][] = [];
    const dirs: ('h2d' | 'd2h')[] = [];
    nextLayers().forEach((l, j) => {
      const blocks = Array.from({ length: 2 * n }, (_, i) => 2 * i + (j % 2));
      const out = blocks.filter((_, i) => i % 2 === 0);
      const back = blocks.filter((_, i) => i % 2 === 1);
      const slots = out.map(() => slabs.alloc(B).offset);
      groups.push(coalesceCopies(out.map((b, i): LayoutCopy => [slots[i], host(l, b), B])));
      groups.push(coalesceCopies(back.map((b, i): LayoutCopy => [host(l, b), slots[slots.length - 1 - i], B])));
      dirs.push('d2h', 'h2d');
      for (const s of slots) slabs.free(s);
    });
    slabExtent = Math.max(slabExtent, slabs.extent);
    batches.push(summarize('mixed', `demote + promote, ${n} single blocks each`, groups, B, dirs));
  }
  for (const n of ORDERED_GROUP_BLOCKS) {
    if (4 * n > M) continue;
    const slabs = new SlabAllocator(ringBytes, slabBytes);
    const demotions: LayoutCopy[][] = [];
    const promotions: LayoutCopy[][] = [];
    const held: number[] = [];
    nextLayers().forEach((l, j) => {
      const blocks = Array.from({ length: 2 * n }, (_, i) => 2 * i + (j % 2));
      const out = blocks.filter((_, i) => i % 2 === 0);
      const back = blocks.filter((_, i) => i % 2 === 1);
      const slots = out.map(() => slabs.alloc(B).offset);
      demotions.push(coalesceCopies(out.map((b, i): LayoutCopy => [slots[i], host(l, b), B])));
      promotions.push(coalesceCopies(back.map((b, i): LayoutCopy => [host(l, b), slots[slots.length - 1 - i], B])));
      held.push(...slots);
    });
    for (const s of held) slabs.free(s);
    slabExtent = Math.max(slabExtent, slabs.extent);
    const dirs = [...demotions.map(() => 'd2h' as const), ...promotions.map(() => 'h2d' as const)];
    batches.push(summarize('mixed', `demotes, then promotes, ${n} single blocks each`, [...demotions, ...promotions], B, dirs));
  }
  // single quantized blocks, after the FP16 batches (which keep their layers and slots)
  const small = smallSizes(o);
  for (const q of small) h2d(smallLabel(q), [1], q);
  for (const q of small) d2h(smallLabel(q), [1], 1, q);
  // the largest quantized size again, H2D from adjacent host slots (runs of one block, no gaps)
  if (small.length > 0) h2d(adjacentLabel(small[0]), [1], small[0], (j) => Array.from({ length: Math.min(o.runsPerLayer, M - 1) }, (_, i) => i + (j % 2)));
  return { slotBytes, hostBytes: o.poolLayers * M * slotBytes, ringBytes, arenaBytes: ringBytes + slabExtent, batches };
}

function summarize(direction: LayoutBatch['direction'], label: string, groups: LayoutCopy[][], B: number, dirs?: ('h2d' | 'd2h')[]): LayoutBatch {
  const lengths: Record<number, number> = {};
  const groupDirections = dirs ?? groups.map(() => direction as 'h2d' | 'd2h');
  const split = { h2d: { runs: 0, bytes: 0 }, d2h: { runs: 0, bytes: 0 } };
  let runs = 0;
  let bytes = 0;
  let switches = 0;
  groups.forEach((g, i) => {
    if (i > 0 && groupDirections[i] !== groupDirections[i - 1]) switches++;
    for (const c of g) {
      runs++;
      bytes += c[2];
      split[groupDirections[i]].runs++;
      split[groupDirections[i]].bytes += c[2];
      if (c[2] % B === 0) lengths[c[2] / B] = (lengths[c[2] / B] ?? 0) + 1;
    }
  });
  return { direction, label, groups, groupDirections, switches, runs, bytes, lengths, split };
}
