/** Blocks created while decoding, in the order first seen: their FP16 KV sits at index * fp16Bytes of the fresh region. */
export class FreshBlocks {
  readonly list: { layer: number; block: number }[] = [];
  private readonly index = new Map<number, number>();

  constructor(
    private readonly M: number,
    private readonly fp16Bytes: number,
  ) {}

  offset(l: number, b: number): number {
    const key = l * this.M + b;
    let i = this.index.get(key);
    if (i === undefined) {
      i = this.list.length;
      this.list.push({ layer: l, block: b });
      this.index.set(key, i);
    }
    return i * this.fp16Bytes;
  }
}
