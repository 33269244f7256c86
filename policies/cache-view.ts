/**
 * What a policy may read of the KV cache: tier placement, precision and occupancy, per (layer,
 * block). Read only: a policy changes placement through `Actions`. The simulator's KVCache
 * (sim/kv-cache.ts) implements it; tier indices follow `tierNames` (0 = HBM), and `tierOf` answers a
 * negative number for a block that does not exist yet or was dropped.
 */
export interface CacheView {
  readonly layers: number;
  readonly maxBlocks: number;
  /** tokens per block */
  readonly blockSize: number;
  /** quantization group size of INT blocks */
  readonly groupSize: number;
  readonly tierNames: readonly string[];
  /** blocks created so far, per layer */
  readonly created: ArrayLike<number>;
  /** index of a tier by name (throws naming the tiers on an unknown one) */
  tierIndex(name: string): number;
  /** bytes of one full block of one layer at `bits` (16, 8, 4, 3, 2) */
  bytesOf(bits: number): number;
  /** free bytes of a tier */
  free(tier: number): number;
  tierOf(layer: number, block: number): number;
  bitsOf(layer: number, block: number): number;
  isPinned(layer: number, block: number): boolean;
  /** pinned blocks of a layer (0 lets a scan skip isPinned()) */
  pinnedIn(layer: number): number;
  /** live (not dropped) blocks of a layer in a tier */
  countIn(layer: number, tier: number): number;
  /** bytes of a layer's live blocks in a tier (full-block reservations) */
  bytesIn(layer: number, tier: number): number;
  /** live blocks of a layer in every tier */
  live(layer: number): number;
  /**
   * changes of a layer's blocks so far: one per block created, moved (or requantized) and dropped,
   * so that a policy that counts the changes it made can tell whether anything else changed the layer
   */
  changesOf(layer: number): number;
}
