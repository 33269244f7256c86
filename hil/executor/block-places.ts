/**
 * Where every block is while lowering: tier (-1 not created, -2 evicted), bits, and the arena offset
 * of resident ones (-1 where none), indexed l * M + b.
 */
export class BlockPlaces {
  readonly tier: Int8Array;
  readonly bits: Int8Array;
  readonly slot: Float64Array;

  constructor(
    /** blocks per layer */
    readonly M: number,
    tier: Int8Array,
    bits: Int8Array,
  ) {
    this.tier = tier.slice();
    this.bits = bits.slice();
    this.slot = new Float64Array(this.tier.length).fill(-1);
  }

  ix(l: number, b: number): number {
    return l * this.M + b;
  }

  set(l: number, b: number, t: number, bits: number): void {
    this.tier[this.ix(l, b)] = t;
    this.bits[this.ix(l, b)] = bits;
  }
}
