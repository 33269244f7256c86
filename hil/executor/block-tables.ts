/**
 * The attention kernel's block tables of a run, back to back in one buffer: per entry 16 bytes
 * (u64 arena offset, i32 precision code, i32 0), little-endian.
 */
export const PREC_CODE: Record<number, number> = { 16: 0, 8: 1, 4: 2, 2: 3, 3: 4 };

export class BlockTables {
  private buf: Uint8Array = new Uint8Array(1 << 16);
  private end = 0;

  /** appends a table; returns its byte offset */
  write(entries: Float64Array, prec: Int32Array): number {
    const need = this.end + entries.length * 16;
    if (need > this.buf.length) {
      const t = new Uint8Array(Math.max(need, this.buf.length * 2));
      t.set(this.buf.subarray(0, this.end));
      this.buf = t;
    }
    const view = new DataView(this.buf.buffer, this.buf.byteOffset);
    const at = this.end;
    for (let i = 0; i < entries.length; i++) {
      view.setBigUint64(at + i * 16, BigInt(entries[i]), true);
      view.setInt32(at + i * 16 + 8, prec[i], true);
      view.setInt32(at + i * 16 + 12, 0, true);
    }
    this.end = need;
    return at;
  }

  get bytes(): Uint8Array {
    return this.buf.subarray(0, this.end);
  }
}
