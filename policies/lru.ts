/** LRU: the least recently used block (by attention use) leaves HBM first (classic baseline). */
import { classicDefinition } from './classic-cache.js';
import { LruReplacer } from './replacers.js';

export const lru = classicDefinition(
  'lru',
  'Classic LRU over KV blocks: a block is used when its mass >= 1% of the row max; the least recently used leaves first (drop: evicted; offload: to DRAM, still attended, promoted back when used).',
  'classic LRU page replacement (Mattson et al., IBM Systems Journal 1970)',
  'drop',
  (s) => () => new LruReplacer(s.maxBlocks),
);
