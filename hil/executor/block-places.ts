/**
 * Where every block is while lowering: tier (-1 not created, -2 evicted), bits, and the arena offset
 * of resident ones (-1 where none), indexed l * M + b; and, for blocks converted from one quantized
 * width to another, the quantized widths their values went through before the current one (`via`):
 * a conversion dequantizes and quantizes again, so a block's bytes depend on that chain.
 */
export class BlockPlaces {
  readonly tier: Int8Array;
  readonly bits: Int8Array;
  readonly slot: Float64Array;
  readonly via = new Map<number, number[]>();

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
    const i = this.ix(l, b);
    const prev = this.bits[i];
    if (bits !== prev && prev > 0 && prev < 16) {
      const chain = this.via.get(i);
      if (chain) chain.push(prev);
      else this.via.set(i, [prev]);
    }
    this.tier[i] = t;
    this.bits[i] = bits;
  }
}
