/**
 * The prefix KV cache, spread over tiers (tier 0 = HBM, then DRAM, CXL, NVMe, ...). A block is
 * identified by its prefix hash and lives in at most one tier (exclusive caching). This class owns
 * all accounting — which tier holds each block, how many running requests use it (pins), capacity
 * per tier — and asks one CachePolicy per tier only which block to evict.
 *
 * - A request's blocks are used from tier 0: `acquire` pins its matched blocks, promotes those found
 *   in lower tiers to tier 0 and inserts its new blocks there (not yet computed); `release` unpins
 *   them, tail first, so a prefix's root is always the most recently released of them.
 * - Making room in a tier evicts an unpinned block, chosen by the tier's policy, and demotes it to
 *   the next tier that can hold blocks (which may evict in turn); the last tier drops it.
 * - Only tier-0 blocks can be pinned, and tier 0 also holds `reserved` tokens: the running requests'
 *   KV that is not a cacheable block (their output, input past the last hashed block).
 * - Capacities are in tokens; a block takes `blockTokens` tokens wherever it is.
 *
 * Policies see dense slot numbers, not hashes: each hash gets the next slot the first time it is
 * seen and keeps it for the life of the cache (so ghost entries stay meaningful).
 */
import type { CachePolicy, CachePolicyDefinition } from './cache-policy.js';

export interface CacheTier {
  name: string;
  /** tokens this tier can hold (Infinity = unbounded) */
  capacityTokens: number;
}

/** No tier: the block is not cached. */
export const NOT_CACHED = -1;

export class TieredPrefixCache {
  readonly tiers: readonly CacheTier[];
  readonly capacity: Float64Array;
  /** blocks resident per tier */
  readonly blocksIn: Float64Array;
  /** highest tokens held per tier so far (tier 0 includes reserved tokens) */
  readonly peakTokens: Float64Array;
  /** blocks demoted out of each tier (into the next tier that holds blocks) */
  readonly demoted: Float64Array;
  /** blocks promoted out of each tier into tier 0 */
  readonly promoted: Float64Array;
  /** blocks dropped from the cache (evicted from the last tier) */
  dropped = 0;
  /** tokens of tier 0 held by running requests outside cached blocks */
  reserved = 0;
  /** tier-0 blocks used by at least one running request */
  pinned = 0;
  /** matched blocks per tier they were found in, by the last acquire */
  readonly hitBlocks: Int32Array;
  /** tier of the last matched block of the last acquire (NOT_CACHED if none matched) */
  lastHitTier = NOT_CACHED;

  /** per tier: the next lower tier that can hold a block, or NOT_CACHED */
  private readonly below: Int32Array;
  private readonly policies: CachePolicy[];
  private readonly slotOf = new Map<number, number>();
  private tier = new Int8Array(1024).fill(NOT_CACHED);
  private pins = new Int32Array(1024);
  private computed = new Uint8Array(1024);
  private slots = 0;
  private cached = 0;

  constructor(
    tiers: readonly CacheTier[],
    policy: CachePolicyDefinition,
    readonly blockTokens: number,
  ) {
    if (tiers.length === 0) throw new Error('TieredPrefixCache: at least one tier is needed');
    if (tiers.length > 100) throw new Error('TieredPrefixCache: at most 100 tiers');
    if (!(Number.isInteger(blockTokens) && blockTokens > 0)) throw new Error(`TieredPrefixCache: blockTokens must be a positive integer (got ${blockTokens})`);
    for (const t of tiers) {
      if (!(t.capacityTokens >= 0)) throw new Error(`TieredPrefixCache: tier ${t.name}: capacityTokens must be >= 0 (got ${t.capacityTokens})`);
    }
    const n = tiers.length;
    this.tiers = tiers;
    this.capacity = Float64Array.from(tiers, (t) => t.capacityTokens);
    this.blocksIn = new Float64Array(n);
    this.peakTokens = new Float64Array(n);
    this.demoted = new Float64Array(n);
    this.promoted = new Float64Array(n);
    this.hitBlocks = new Int32Array(n);
    this.below = new Int32Array(n).fill(NOT_CACHED);
    for (let t = n - 2; t >= 0; t--) {
      this.below[t] = this.capacity[t + 1] >= blockTokens ? t + 1 : this.below[t + 1];
    }
    this.policies = tiers.map((t) => policy.create(Math.floor(t.capacityTokens / blockTokens)));
  }

  /** Blocks cached now (all tiers, including blocks a running request is still computing). */
  get size(): number {
    return this.cached;
  }

  private slot(id: number): number {
    let s = this.slotOf.get(id);
    if (s === undefined) {
      s = this.slots++;
      this.slotOf.set(id, s);
      if (s >= this.tier.length) this.grow();
    }
    return s;
  }

  private grow(): void {
    const n = this.tier.length * 2;
    const tier = new Int8Array(n).fill(NOT_CACHED);
    tier.set(this.tier);
    const pins = new Int32Array(n);
    pins.set(this.pins);
    const computed = new Uint8Array(n);
    computed.set(this.computed);
    this.tier = tier;
    this.pins = pins;
    this.computed = computed;
  }

  tierOf(id: number): number {
    const s = this.slotOf.get(id);
    return s === undefined ? NOT_CACHED : this.tier[s];
  }

  pinsOf(id: number): number {
    const s = this.slotOf.get(id);
    return s === undefined ? 0 : this.pins[s];
  }

  isComputed(id: number): boolean {
    const s = this.slotOf.get(id);
    return s !== undefined && this.tier[s] !== NOT_CACHED && this.computed[s] === 1;
  }

  markComputed(id: number): void {
    const s = this.slotOf.get(id);
    if (s !== undefined && this.tier[s] !== NOT_CACHED) this.computed[s] = 1;
  }

  /** The tier that blocks evicted from tier t go to (NOT_CACHED: they are dropped). */
  demotionTarget(t: number): number {
    return this.below[t];
  }

  usedTokens(t: number): number {
    return this.blocksIn[t] * this.blockTokens + (t === 0 ? this.reserved : 0);
  }

  freeTokens(t: number): number {
    return this.capacity[t] - this.usedTokens(t);
  }

  /** Length of the leading run of `hashIds` that is cached (in any tier). */
  lookup(hashIds: readonly number[]): number {
    let k = 0;
    while (k < hashIds.length && this.tierOf(hashIds[k]) !== NOT_CACHED) k++;
    return k;
  }

  /**
   * How many leading blocks of `hashIds` could be held in tier 0 at once, together with
   * `extraTokens` reserved tokens, evicting only unpinned blocks (the first `matched` are cached).
   * Returns -1 when not even the reserved tokens fit.
   */
  fitCount(hashIds: readonly number[], matched: number, extraTokens: number): number {
    const bt = this.blockTokens;
    let available = this.capacity[0] - this.reserved - this.pinned * bt;
    let need = extraTokens;
    if (need > available) return -1;
    for (let i = 0; i < hashIds.length; i++) {
      const s = i < matched ? this.slotOf.get(hashIds[i])! : -1;
      if (s >= 0 && this.tier[s] === 0) {
        if (this.pins[s] === 0) available -= bt;
      } else need += bt;
      if (need > available) return i;
    }
    return hashIds.length;
  }

  /**
   * Hold the first `held` blocks of `hashIds` in tier 0 for a request whose first `matched` blocks
   * are cached, and reserve `extraTokens` tokens of tier 0. `held` must not exceed fitCount(...).
   * Fills `hitBlocks` (matched blocks per tier they were found in) and `lastHitTier`.
   */
  acquire(hashIds: readonly number[], matched: number, held: number, extraTokens: number): void {
    const hits = this.hitBlocks;
    hits.fill(0);
    this.lastHitTier = NOT_CACHED;
    let moving = 0;
    for (let i = 0; i < matched; i++) {
      const s = this.slotOf.get(hashIds[i])!;
      const t = this.tier[s];
      hits[t]++;
      if (i === matched - 1) this.lastHitTier = t;
      if (i >= held) continue;
      if (t === 0) this.useInTop(s);
      else {
        this.leave(s, t);
        this.promoted[t]++;
        moving++;
      }
    }
    // Blocks past the matched run may still be cached on their own (an ancestor was evicted
    // before them). The request recomputes them: a copy in HBM is pinned and rewritten in place
    // (not computed until then), a copy in a lower tier is discarded and the block is inserted into
    // HBM like a new one.
    let fresh = 0;
    for (let i = matched; i < held; i++) {
      const s = this.slotOf.get(hashIds[i]);
      const t = s === undefined ? NOT_CACHED : this.tier[s];
      if (t === 0) {
        if (this.pins[s!] === 0) this.computed[s!] = 0;
        this.useInTop(s!);
        continue;
      }
      if (t !== NOT_CACHED) this.leave(s!, t);
      fresh++;
    }
    this.makeRoom(0, (moving + fresh) * this.blockTokens + extraTokens);
    const p0 = this.policies[0];
    for (let i = held - 1; i >= 0; i--) {
      const s = this.slot(hashIds[i]);
      if (this.tier[s] === 0) continue;
      if (i >= matched) this.computed[s] = 0;
      this.tier[s] = 0;
      this.pins[s]++;
      this.pinned++;
      this.blocksIn[0]++;
      this.cached++;
      p0.insert(s, true);
    }
    this.reserved += extraTokens;
    if (this.freeTokens(0) < 0) throw new Error('TieredPrefixCache: tier 0 over capacity after acquire (held > fitCount?)');
    for (let t = 0; t < this.tiers.length; t++) {
      const u = this.usedTokens(t);
      if (u > this.peakTokens[t]) this.peakTokens[t] = u;
    }
  }

  /** A request uses tier-0 block s: one more pin (the policy hears of the first), and an access. */
  private useInTop(s: number): void {
    const p0 = this.policies[0];
    if (this.pins[s]++ === 0) {
      this.pinned++;
      p0.pin(s);
    }
    p0.access(s);
  }

  /** Block s leaves tier t without going anywhere yet (promoted, or a stale copy discarded). */
  private leave(s: number, t: number): void {
    this.policies[t].remove(s);
    this.blocksIn[t]--;
    this.tier[s] = NOT_CACHED;
    this.cached--;
  }

  /** Undo `acquire`: unpin the first `held` blocks, last block first, and free the reserved tokens. */
  release(hashIds: readonly number[], held: number, extraTokens: number): void {
    const p0 = this.policies[0];
    for (let i = held - 1; i >= 0; i--) {
      const s = this.slotOf.get(hashIds[i])!;
      if (--this.pins[s] === 0) {
        this.pinned--;
        p0.unpin(s);
      }
    }
    this.reserved -= extraTokens;
  }

  /** Evict (and demote) unpinned blocks of tier t until it has `tokens` free. */
  private makeRoom(t: number, tokens: number): void {
    while (this.freeTokens(t) < tokens) {
      const s = this.policies[t].evict();
      if (s < 0) throw new Error(`TieredPrefixCache: tier ${this.tiers[t].name} is full of pinned blocks`);
      this.demote(s, t);
    }
  }

  private demote(s: number, t: number): void {
    this.blocksIn[t]--;
    const to = this.below[t];
    if (to === NOT_CACHED) {
      this.tier[s] = NOT_CACHED;
      this.cached--;
      this.dropped++;
      return;
    }
    this.demoted[t]++;
    this.makeRoom(to, this.blockTokens);
    this.tier[s] = to;
    this.blocksIn[to]++;
    this.policies[to].insert(s, false);
  }

  /** Recount everything from the blocks themselves; throws on any mismatch (for tests). */
  checkInvariants(): void {
    const n = this.tiers.length;
    const count = new Float64Array(n);
    let pinned = 0;
    let cached = 0;
    for (const [id, s] of this.slotOf) {
      const t = this.tier[s];
      if (t === NOT_CACHED) {
        if (this.pins[s] !== 0) throw new Error(`uncached block ${id} has ${this.pins[s]} pins`);
        continue;
      }
      if (t < 0 || t >= n) throw new Error(`block ${id} has tier ${t}`);
      if (this.pins[s] < 0) throw new Error(`block ${id} has ${this.pins[s]} pins`);
      if (this.pins[s] > 0 && t !== 0) throw new Error(`block ${id} is pinned outside tier 0`);
      if (this.pins[s] > 0) pinned++;
      count[t]++;
      cached++;
    }
    for (let t = 0; t < n; t++) {
      if (count[t] !== this.blocksIn[t]) throw new Error(`tier ${this.tiers[t].name}: ${count[t]} blocks counted, ${this.blocksIn[t]} recorded`);
      if (this.usedTokens(t) > this.capacity[t]) throw new Error(`tier ${this.tiers[t].name}: ${this.usedTokens(t)} tokens > capacity ${this.capacity[t]}`);
    }
    if (pinned !== this.pinned) throw new Error(`${pinned} pinned blocks counted, ${this.pinned} recorded`);
    if (cached !== this.cached) throw new Error(`${cached} cached blocks counted, ${this.cached} recorded`);
    if (this.reserved < 0) throw new Error(`reserved tokens ${this.reserved} < 0`);
  }
}
