/** An append-only Float64Array that doubles when full. */
export class FloatBuffer {
  private data: Float64Array;
  length = 0;

  constructor(initial = 1024) {
    this.data = new Float64Array(Math.max(1, initial));
  }

  push(v: number): void {
    if (this.length === this.data.length) {
      const d = new Float64Array(this.data.length * 2);
      d.set(this.data);
      this.data = d;
    }
    this.data[this.length++] = v;
  }

  /** A copy of the values pushed so far. */
  toArray(): Float64Array {
    return this.data.slice(0, this.length);
  }
}
