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
import type { OptionSpec } from '../common/options.js';

export interface CachePolicy {
  insert(id: number, pinned: boolean): void;
  access(id: number): void;
  pin(id: number): void;
  unpin(id: number): void;
  remove(id: number): void;
  evict(): number;
}

/**
 * A registered prefix-cache policy: the same shape as an attention-level PolicyDefinition (a name,
 * a description, typed options) with a factory per tier.
 */
export interface CachePolicyDefinition<O extends Record<string, unknown> = Record<string, unknown>> {
  name: string;
  description: string;
  /** typed options (resolveCachePolicyOptions checks raw values against them) */
  options: OptionSpec[];
  /**
   * `capacityBlocks` is the tier's size in blocks (Infinity when unbounded); `options` are resolved
   * values, every option at its default when left out
   */
  create(capacityBlocks: number, options?: O): CachePolicy;
}
