/** FIFO: the block that entered HBM first leaves first (classic baseline; no notion of attention). */
import { classicDefinition } from './classic-cache.js';
import { FifoReplacer } from './replacers.js';

export const fifo = classicDefinition(
  'fifo',
  'Classic FIFO over KV blocks: HBM holds the budget, the oldest-admitted block leaves first (drop: evicted; offload: to DRAM, still attended, promoted back when used).',
  'classic FIFO page replacement (Belady 1966 baseline)',
  'drop',
  (s) => () => new FifoReplacer(s.maxBlocks),
);
