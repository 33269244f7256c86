/**
 * ARC: adaptive replacement between recency (T1) and frequency (T2) with ghost lists (B1, B2).
 * Offload mode only: a ghost hit needs the block to come back, and a dropped block never does.
 */
import { classicDefinition } from './classic-cache.js';
import { ArcReplacer } from './replacers.js';

export const arc = classicDefinition(
  'arc',
  'ARC over KV blocks: T1 (used once) / T2 (used again) with ghost lists B1/B2 and an adaptive T1 target p; victims go to DRAM at FP16 and stay attended; a used offloaded block is a miss (ghost hits adapt p) and is promoted back.',
  'Megiddo & Modha, ARC: A Self-Tuning, Low Overhead Replacement Cache, FAST 2003',
  'offload',
  (s) => () => new ArcReplacer(s.maxBlocks, Math.max(1, s.budgetBlocks)),
  ['offload'],
);
