/**
 * Least frequently used, ties broken by least recent use. Counts live while a block is resident in
 * the tier (a block that leaves and comes back starts at 1). The order is policies/lfu-order.ts,
 * the same core as the attention-level LFU replacer: here the ids are the prefix blocks' dense ids.
 */
import { LfuOrder } from '../policies/lfu-order.js';
import type { CachePolicy, CachePolicyDefinition } from './cache-policy.js';

export class LfuPolicy extends LfuOrder implements CachePolicy {}

export const lfuPolicy: CachePolicyDefinition = {
  name: 'lfu',
  description: 'least frequently used block first (uses while resident), least recent among equals',
  options: [],
  create: () => new LfuPolicy(),
};
