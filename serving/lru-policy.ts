/**
 * Least recently used. Unpinned blocks sit in a list in recency order; a pinned block leaves it and
 * re-enters as the most recent when its last user releases it, so a block's recency is its last
 * use. The cache releases a request's blocks tail first, which leaves a prefix's root as the most
 * recent block: LRU then evicts the leaves of prefix chains before their ancestors.
 */
import type { CachePolicy, CachePolicyDefinition } from './cache-policy.js';
import { DenseList } from '../common/dense-list.js';

export class LruPolicy implements CachePolicy {
  private readonly order = new DenseList();

  insert(id: number, pinned: boolean): void {
    if (!pinned) this.order.push(id);
  }

  access(id: number): void {
    if (this.order.remove(id)) this.order.push(id);
  }

  pin(id: number): void {
    this.order.remove(id);
  }

  unpin(id: number): void {
    this.order.push(id);
  }

  remove(id: number): void {
    this.order.remove(id);
  }

  evict(): number {
    return this.order.shift();
  }
}

export const lruPolicy: CachePolicyDefinition = {
  name: 'lru',
  description: 'least recently used block first (recency = last use by a request)',
  options: [],
  create: () => new LruPolicy(),
};
