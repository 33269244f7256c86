/**
 * The value checks of one row (a layer, or a layer's KV-head group) of a decode step. Every path
 * that writes or reads steps runs this one check: TraceWriter (through StepChecker) before a step
 * is written, and TraceReader on every record it reads, so `trace validate`, `trace stats`, `run`,
 * `sweep` and `hil run` accept and refuse exactly the same values.
 *
 * The caller checks the structure first (nBlocks, how many blocks are listed, the norm range);
 * this checks the values: dense remainder 0; topk idx < nBlocks and unique, remainder finite in
 * [0, 1] (and ~0 when every block is listed); each mass finite in [0, 1]; listed mass + remainder
 * = 1 within the tolerance; key norms finite and >= 0.
 *
 * It runs on every row a replay reads, so it is kept cheap: one pass over idx and mass together,
 * four entries at a time into four partial sums (a second pass over idx only for a row whose
 * indices are not ascending, for uniqueness), one over the norms; nothing is allocated unless
 * such a row has more blocks than any before, and messages are built only when a check fails.
 */

/** `layer 3`, or `layer 3 group 1` when the trace has several KV-head groups. */
export function rowLabel(row: number, kvGroups: number): string {
  return kvGroups === 1 ? `layer ${row}` : `layer ${Math.floor(row / kvGroups)} group ${row % kvGroups}`;
}

export const DEFAULT_MASS_TOLERANCE = 1e-3;

/** The tolerance as given, or an Error naming the valid range. */
export function checkMassTolerance(t: number | undefined): number {
  const v = t ?? DEFAULT_MASS_TOLERANCE;
  if (!(v >= 0 && v < 1)) throw new Error(`massTolerance: expected a number in [0, 1), got ${String(v)}`);
  return v;
}

export class RowValueCheck {
  /** seen[b] === stamp marks block b as listed in the current row (uniqueness in O(k)) */
  private seen = new Uint32Array(0);
  private stamp = 0;

  /**
   * @param kvGroups the header's kv_groups (for the row's name in messages)
   * @param dense the header's encoding is dense (mass[b] is block b, no idx, remainder 0)
   * @param tolerance allowed |sum(mass) + remainder - 1|
   */
  constructor(
    private readonly kvGroups: number,
    private readonly dense: boolean,
    private readonly tolerance: number,
  ) {}

  /**
   * Throw `${where}: layer L[ group G]: field 'F': <what is wrong>` unless the row's values are
   * valid. `idx` is null for a dense trace; `nBlocks` is the step's block count.
   */
  check(
    idx: Uint32Array | null,
    mass: Float32Array,
    remainder: number,
    norms: Float32Array,
    nBlocks: number,
    where: string,
    row: number,
  ): void {
    const listed = mass.length;
    let sum = 0;
    if (this.dense) {
      if (remainder !== 0) throw this.fail(where, row, `field 'remainder': expected 0 in a dense trace, got ${String(remainder)}`);
      sum = this.denseSum(mass, where, row);
    } else {
      if (idx === null) throw this.fail(where, row, `field 'idx': expected a Uint32Array in a topk trace`);
      if (!(remainder >= 0 && remainder <= 1)) {
        throw this.fail(where, row, `field 'remainder': expected a finite number in [0, 1], got ${String(remainder)}`);
      }
      if (listed === nBlocks && remainder > this.tolerance) {
        throw this.fail(where, row, `field 'remainder': expected 0 when every block is listed, got ${remainder}`);
      }
      sum = this.topkSum(idx, mass, nBlocks, where, row);
    }
    sum += remainder;
    if (Math.abs(sum - 1) > this.tolerance) {
      throw this.fail(where, row, `field 'mass': listed mass + remainder is ${sum}, expected 1 (within ${this.tolerance})`);
    }
    for (let i = 0; i < norms.length; i++) {
      const v = norms[i]!;
      if (!(v >= 0 && v < Infinity)) throw this.fail(where, row, `field 'norms[${i}]': expected a finite number >= 0, got ${v}`);
    }
  }

  /**
   * The sum of a dense row's masses, each checked to be in [0, 1]: four at a time into four sums
   * (a dense row has a mass per block, so this loop is the check's cost on dense traces).
   */
  private denseSum(mass: Float32Array, where: string, row: number): number {
    const n = mass.length;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let i = 0;
    for (; i + 4 <= n; i += 4) {
      const a = mass[i]!;
      const b = mass[i + 1]!;
      const c = mass[i + 2]!;
      const d = mass[i + 3]!;
      if (!(a >= 0 && a <= 1 && b >= 0 && b <= 1 && c >= 0 && c <= 1 && d >= 0 && d <= 1)) break;
      s0 += a;
      s1 += b;
      s2 += c;
      s3 += d;
    }
    for (; i < n; i++) {
      const v = mass[i]!;
      if (!(v >= 0 && v <= 1)) throw this.fail(where, row, `field 'mass[${i}]': expected a finite number in [0, 1], got ${v}`);
      s0 += v;
    }
    return s0 + s1 + (s2 + s3);
  }

  /**
   * The sum of a top-k row's listed masses, each index checked to be < nBlocks and unique and each
   * mass to be in [0, 1]; four entries at a time into four sums, the first bad entry named.
   */
  private topkSum(idx: Uint32Array, mass: Float32Array, nBlocks: number, where: string, row: number): number {
    const n = mass.length;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let descents = 0;
    let i = 0;
    for (; i + 4 <= n; i += 4) {
      const b0 = idx[i]!;
      const b1 = idx[i + 1]!;
      const b2 = idx[i + 2]!;
      const b3 = idx[i + 3]!;
      const a = mass[i]!;
      const b = mass[i + 1]!;
      const c = mass[i + 2]!;
      const d = mass[i + 3]!;
      if (!(b0 < nBlocks && b1 < nBlocks && b2 < nBlocks && b3 < nBlocks)) break;
      if (!(a >= 0 && a <= 1 && b >= 0 && b <= 1 && c >= 0 && c <= 1 && d >= 0 && d <= 1)) break;
      if (b1 <= b0 || b2 <= b1 || b3 <= b2 || (i > 0 && b0 <= idx[i - 1]!)) descents++;
      s0 += a;
      s1 += b;
      s2 += c;
      s3 += d;
    }
    for (; i < n; i++) {
      const bi = idx[i]!;
      if (bi >= nBlocks) throw this.fail(where, row, `field 'idx[${i}]': expected a block index < nBlocks (${nBlocks}), got ${bi}`);
      if (i > 0 && bi <= idx[i - 1]!) descents++;
      const v = mass[i]!;
      if (!(v >= 0 && v <= 1)) throw this.fail(where, row, `field 'mass[${i}]': expected a finite number in [0, 1], got ${v}`);
      s0 += v;
    }
    // indices in ascending order (as the generator writes them) are unique; a row with a descent
    // is checked against a table of the blocks seen in it
    if (descents > 0) this.checkUnique(idx, nBlocks, where, row);
    return s0 + s1 + (s2 + s3);
  }

  private checkUnique(idx: Uint32Array, nBlocks: number, where: string, row: number): void {
    if (this.seen.length < nBlocks) this.seen = new Uint32Array(Math.max(nBlocks, 2 * this.seen.length));
    const seen = this.seen;
    const stamp = this.nextStamp();
    for (let i = 0; i < idx.length; i++) {
      const b = idx[i]!;
      if (seen[b] === stamp) throw this.fail(where, row, `field 'idx[${i}]': block ${b} is listed twice (indices must be unique)`);
      seen[b] = stamp;
    }
  }

  private fail(where: string, row: number, what: string): Error {
    return new Error(`${where}: ${rowLabel(row, this.kvGroups)}: ${what}`);
  }

  private nextStamp(): number {
    this.stamp = (this.stamp + 1) >>> 0;
    if (this.stamp === 0) {
      this.seen.fill(0);
      this.stamp = 1;
    }
    return this.stamp;
  }
}
