/**
 * A replacement policy for one tier of the prefix cache. It only decides which block to evict; the
 * tiered cache (tiered-prefix-cache.ts) owns residency, pins and capacity, so a policy can never
 * overfill a tier or evict a block a running request uses.
 *
 * Calls a policy receives, all about blocks resident in its tier:
 * - insert(id, pinned): the block entered the tier (new, demoted into it, or promoted into it)
 * - access(id): a request matched the block (it stays where it is)
 * - pin(id) / unpin(id): the block became used by a running request / no longer used by any
 * - remove(id): the block left the tier for another reason than eviction (promoted to a higher tier)
 * - evict(): pick an unpinned block, forget it and return its id (-1 when all are pinned)
 */
export interface CachePolicy {
  insert(id: number, pinned: boolean): void;
  access(id: number): void;
  pin(id: number): void;
  unpin(id: number): void;
  remove(id: number): void;
  evict(): number;
}

export interface CachePolicyDefinition {
  name: string;
  description: string;
  /** `capacityBlocks` is the tier's size in blocks (Infinity when unbounded) */
  create(capacityBlocks: number): CachePolicy;
}
