/** LFU: the block with the fewest uses since it entered HBM leaves first; ties: least recent. */
import { classicDefinition } from './classic-cache.js';
import { LfuReplacer } from './replacers.js';

export const lfu = classicDefinition(
  'lfu',
  'Classic LFU over KV blocks: fewest attention uses (mass >= 1% of row max) since admission leaves first, ties least recently used (drop: evicted; offload: to DRAM, still attended).',
  'classic LFU page replacement (in-cache frequency counts)',
  'drop',
  (s) => () => new LfuReplacer(s.maxBlocks),
);
