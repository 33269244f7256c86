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
 * One pass over idx and mass together and one over the norms; nothing is allocated unless a row
 * has more blocks than any row before, and messages are built only when a check fails.
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
      for (let i = 0; i < listed; i++) {
        const v = mass[i]!;
        if (!(v >= 0 && v <= 1)) throw this.fail(where, row, `field 'mass[${i}]': expected a finite number in [0, 1], got ${v}`);
        sum += v;
      }
    } else {
      if (idx === null) throw this.fail(where, row, `field 'idx': expected a Uint32Array in a topk trace`);
      if (!(remainder >= 0 && remainder <= 1)) {
        throw this.fail(where, row, `field 'remainder': expected a finite number in [0, 1], got ${String(remainder)}`);
      }
      if (listed === nBlocks && remainder > this.tolerance) {
        throw this.fail(where, row, `field 'remainder': expected 0 when every block is listed, got ${remainder}`);
      }
      if (this.seen.length < nBlocks) this.seen = new Uint32Array(Math.max(nBlocks, 2 * this.seen.length));
      const seen = this.seen;
      const stamp = this.nextStamp();
      for (let i = 0; i < listed; i++) {
        const b = idx[i]!;
        if (b >= nBlocks) throw this.fail(where, row, `field 'idx[${i}]': expected a block index < nBlocks (${nBlocks}), got ${b}`);
        if (seen[b] === stamp) throw this.fail(where, row, `field 'idx[${i}]': block ${b} is listed twice (indices must be unique)`);
        seen[b] = stamp;
        const v = mass[i]!;
        if (!(v >= 0 && v <= 1)) throw this.fail(where, row, `field 'mass[${i}]': expected a finite number in [0, 1], got ${v}`);
        sum += v;
      }
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
