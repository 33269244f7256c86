/**
 * Next use of every (layer, block), streamed: what Belady's MIN needs, in memory O(layers x blocks)
 * plus at most `memoryBytes` of records whatever the number of steps.
 *
 * Consecutive steps mostly use the same blocks, so the records hold each step's changes to every
 * layer's used set, not the set; they stay in memory up to `memoryBytes`, past which they all go to
 * a spill file (unlinked as soon as it is open, so nothing is left behind):
 *  1. forward over the steps: step t's record is [nBlocks, added count per layer..., dropped count
 *     per layer..., added blocks..., dropped blocks..., dropped blocks' next-use slots...], where a
 *     block is added when used at t and not at t - 1, dropped when used at t - 1 and not at t;
 *  2. backward over the records: a block dropped at t + 1 is next used at the first step > t that
 *     uses it, kept in a running array `last[l][b]` that is written only where a block's use changes
 *     (the blocks used at s + 1 have first use s + 1 there without being written), so the pass costs
 *     the changes, not the uses.
 * Then a forward cursor reads one record at a time, keeping one record ahead: `load(t)` applies step
 * t's changes to the used sets and gives step t's uses and their next uses (t + 1 unless dropped at
 * t + 1, where the slot gives it); per layer, `nextUseOf(l, b)` gives each block's first use at or
 * after the layer's current step, and `advance(l, t)` moves the layer past step t by step t + 1's
 * changes alone: a block used at the layer's current step has its first use there (a mark), any
 * other keeps it in an array written when the block is dropped.
 *
 * The steps are given either as each layer's used blocks (`uses`) or as their changes from the step
 * before (`changes`: the first step's from empty sets), all steps in one form. A caller that reads
 * only the marks, the changes and the next uses moves the cursor with `seek(t)`, which applies the
 * changes without rebuilding the used lists that `load(t)` gives.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** One step's record as loaded: views of the cursor's buffer, valid until the next load. */
export interface UseRecord {
  step: number;
  nBlocks: number;
  /** blocks used by layer l: blocks.subarray(from[l], from[l + 1]) */
  blocks: Int32Array;
  /** next[i]: the next step after this one at which blocks[i] (of its layer) is used, or `never` (written when first read, which must come before the next load) */
  next: Int32Array;
  from: Int32Array;
}

/** One step's changes to the used sets (from the step before it): views, valid until the next load. */
export interface StepChanges {
  readonly step: number;
  /** per layer: added blocks addFrom[l]..addFrom[l + 1] of `added`, dropped dropFrom[l].. of `dropped` (each ascending) */
  readonly addFrom: Int32Array;
  readonly dropFrom: Int32Array;
  readonly added: Int32Array;
  readonly dropped: Int32Array;
  /** next use of each dropped block after the step before this one */
  readonly slots: Int32Array;
}

/** One step's changes to each layer's used set (from the step before; the first step's from empty sets). */
export interface UseChanges {
  /** per layer l: added.subarray(addFrom[l], addFrom[l + 1]) and dropped.subarray(dropFrom[l], dropFrom[l + 1]), each strictly ascending */
  readonly addFrom: Int32Array;
  readonly added: Int32Array;
  readonly dropFrom: Int32Array;
  readonly dropped: Int32Array;
}

/** One step as the index is built from it: its context's block count and each layer's used blocks, or their changes. */
export type UseStep = { nBlocks: number; uses: readonly Int32Array[] } | { nBlocks: number; changes: UseChanges };

/** One step's changes as read from the spill file: views of `words`. */
interface Changes extends StepChanges {
  nBlocks: number;
  /** the whole record, and the word where the slots start */
  words: Int32Array;
  slotsAt: number;
}

export class NextUseIndex {
  /** the value standing for "never used again": the number of steps */
  readonly never: number;
  /**
   * per layer x block (l * maxBlocks + b): 1 where the layer's current step uses the block (its first
   * use is that step); elsewhere `later` holds the first use at or after it, or never
   */
  readonly usedNow: Uint8Array;
  /** per layer: how many blocks its current step uses (the marks set in usedNow) */
  readonly usedCount: Int32Array;
  /** one above the highest block any step uses (0 when none does) */
  readonly blockBound: number;
  private readonly later: Int32Array;
  /** per layer: the step nextUseOf describes (uses before it are consumed) */
  private readonly cursor: Int32Array;
  /** byte offset of each step's record in the spill file, and the end */
  private readonly offsets: Float64Array;
  /** the records while in memory (their words up to memWords), null once in the spill file or closed */
  private mem: Int32Array | null = new Int32Array(1024);
  private memWords = 0;
  private fd: number | null = null;
  private closed = false;
  /** record buffers: the one being built or read, and the cursor's record ahead */
  private buf: Int32Array = new Int32Array(0);
  private aheadBuf: Int32Array = new Int32Array(0);
  private ahead: Changes | null = null;
  /** the last applied step's changes */
  private current: Changes | null = null;
  /**
   * the used sets of the last applied step (per layer, ascending, concatenated), double-buffered in
   * one array: halves at 0 and setCap, the current one at which x setCap
   */
  private setBuf = new Int32Array(0);
  private setCap = 0;
  private setFrom = [new Int32Array(0), new Int32Array(0)];
  private which = 0;
  private next = new Int32Array(0);
  /** the last applied step (-1: none) */
  private applied = -1;
  private loaded: UseRecord | null = null;

  /**
   * Build the index from `steps`, consecutive from step 0: each gives its context's block count and
   * each layer's used blocks (strictly ascending, each below `maxBlocks`).
   */
  constructor(
    readonly layers: number,
    readonly maxBlocks: number,
    steps: Iterable<UseStep>,
    /** bytes of records kept in memory before they go to a spill file */
    readonly memoryBytes = 64 << 20,
  ) {
    const L = layers;
    const M = maxBlocks;
    this.setFrom = [new Int32Array(L + 1), new Int32Array(L + 1)];
    try {
      // pass 1: forward, append each step's changes (the previous step's sets kept in prev)
      const offs: number[] = [0];
      let pos = 0;
      let t = 0;
      let prev = new Int32Array(0);
      const prevFrom = new Int32Array(L + 1);
      let cur = new Int32Array(0);
      const curFrom = new Int32Array(L + 1);
      let added = new Int32Array(0);
      let dropped = new Int32Array(0);
      const nAdd = new Int32Array(L);
      const nDrop = new Int32Array(L);
      let bound = 0;
      /** the form of the steps (known at the first), and with changes, the used sets' marks */
      let form: 'uses' | 'changes' | null = null;
      let member: Uint8Array | null = null;
      for (const s of steps) {
        const f = 'changes' in s ? 'changes' : 'uses';
        if (form !== null && f !== form) throw new Error(`next-use index: step ${t} is given as ${f}, the steps before it as ${form}`);
        form = f;
        if ('changes' in s) {
          member ??= new Uint8Array(L * M);
          const words = this.recordOfChanges(s.changes, s.nBlocks, t, member);
          bound = Math.max(bound, this.changesBound);
          this.store(this.buf, words, pos);
          pos += words * 4;
          offs.push(pos);
          t++;
          continue;
        }
        const lists = s.uses;
        if (lists.length !== L) throw new Error(`next-use index: step ${t}: ${lists.length} layers of uses, expected ${L}`);
        let total = 0;
        for (const u of lists) total += u.length;
        if (cur.length < total) cur = new Int32Array(Math.max(total, 2 * cur.length));
        if (added.length < total) added = new Int32Array(Math.max(total, 2 * added.length));
        if (dropped.length < prevFrom[L]) dropped = new Int32Array(Math.max(prevFrom[L], 2 * dropped.length));
        let na = 0;
        let nd = 0;
        let o = 0;
        for (let l = 0; l < L; l++) {
          const u = lists[l];
          const m = u.length;
          curFrom[l] = o;
          if (m > 0 && !(u[0] >= 0 && u[m - 1] < M)) {
            const b = u.find((x) => !(x >= 0 && x < M));
            if (b !== undefined) throw new Error(`next-use index: step ${t} layer ${l}: block ${b} outside 0..${M - 1}`);
          }
          if (m > 0 && u[m - 1] + 1 > bound) bound = u[m - 1] + 1;
          // the changes from the previous step's set: one merge of two ascending lists, checking the
          // blocks ascending on the way (a block equal to one of the previous set, which was checked,
          // follows the block before it: only added blocks need the check), then the first and last
          // blocks bound them all
          const a0 = na;
          const d0 = nd;
          let i = prevFrom[l];
          const iEnd = prevFrom[l + 1];
          let j = 0;
          while (i < iEnd && j < m) {
            // (equal runs four at a time)
            while (i + 4 <= iEnd && j + 4 <= m && prev[i] === u[j] && prev[i + 1] === u[j + 1] && prev[i + 2] === u[j + 2] && prev[i + 3] === u[j + 3]) {
              i += 4;
              j += 4;
            }
            if (!(i < iEnd && j < m)) break;
            const x = prev[i];
            const y = u[j];
            if (x === y) {
              i++;
              j++;
            } else if (x < y) {
              dropped[nd++] = x;
              i++;
            } else {
              if (j > 0 && !(y > u[j - 1])) throw notAscending(t, l, u[j - 1], y);
              added[na++] = y;
              j++;
            }
          }
          while (i < iEnd) dropped[nd++] = prev[i++];
          for (; j < m; j++) {
            const y = u[j];
            if (j > 0 && !(y > u[j - 1])) throw notAscending(t, l, u[j - 1], y);
            added[na++] = y;
          }
          cur.set(u, o);
          o += m;
          nAdd[l] = na - a0;
          nDrop[l] = nd - d0;
        }
        curFrom[L] = o;
        const words = 1 + 2 * L + na + 2 * nd;
        const rec = this.scratch(words);
        rec[0] = s.nBlocks;
        rec.set(nAdd, 1);
        rec.set(nDrop, 1 + L);
        rec.set(added.subarray(0, na), 1 + 2 * L);
        rec.set(dropped.subarray(0, nd), 1 + 2 * L + na);
        rec.fill(0, 1 + 2 * L + na + nd, words);
        this.store(rec, words, pos);
        pos += words * 4;
        offs.push(pos);
        [prev, cur] = [cur, prev];
        prevFrom.set(curFrom);
        t++;
      }
      this.offsets = Float64Array.from(offs);
      this.never = t;
      this.blockBound = bound;
      // pass 2: backward, fill the dropped blocks' next-use slots. Before step s is handled, a block's
      // first use at or after s + 1 is s + 1 when step s + 1 uses it, else last[l * M + b].
      const last = new Int32Array(L * M).fill(t);
      for (let s = t - 2; s >= 0; s--) {
        const c = this.read(s + 1, this.buf);
        this.buf = c.words;
        for (let l = 0; l < L; l++) {
          const base = l * M;
          // dropped at s + 1: used at s, next at the first use after s (not s + 1)
          for (let i = c.dropFrom[l]; i < c.dropFrom[l + 1]; i++) c.slots[i] = last[base + c.dropped[i]];
          // added at s + 1: not used at s, first use after s is s + 1
          for (let i = c.addFrom[l]; i < c.addFrom[l + 1]; i++) last[base + c.added[i]] = s + 1;
        }
        this.store(c.slots, c.slots.length, this.offsets[s + 1] + c.slotsAt * 4);
      }
      if (t > 0) {
        const c = this.read(0, this.buf);
        this.buf = c.words;
      }
      // (the blocks of step 0 are marked as the cursor takes its record)
      this.usedNow = new Uint8Array(L * M);
      this.usedCount = new Int32Array(L);
      this.later = last;
      this.cursor = new Int32Array(L);
      this.loaded = null;
      if (t === 0) this.close();
      else {
        this.ahead = this.read(0, this.aheadBuf);
        this.aheadBuf = this.ahead.words;
        for (let l = 0; l < L; l++) {
          for (let i = this.ahead.addFrom[l]; i < this.ahead.addFrom[l + 1]; i++) this.usedNow[l * M + this.ahead.added[i]] = 1;
          this.usedCount[l] = this.ahead.addFrom[l + 1] - this.ahead.addFrom[l];
        }
      }
    } catch (e) {
      this.close();
      throw e;
    }
  }

  private removeAtClose: { file: string; dir: string } | null = null;
  /** one above the highest block of the last recordOfChanges' added blocks */
  private changesBound = 0;

  /**
   * Step t's record from its changes, in `buf` (its words returned): each layer's added and dropped
   * blocks checked strictly ascending, below maxBlocks, and against the used sets (`member`, kept).
   */
  private recordOfChanges(c: UseChanges, nBlocks: number, t: number, member: Uint8Array): number {
    const L = this.layers;
    const M = this.maxBlocks;
    if (c.addFrom.length < L + 1 || c.dropFrom.length < L + 1) throw new Error(`next-use index: step ${t}: changes of fewer than ${L} layers`);
    const na = c.addFrom[L] - c.addFrom[0];
    const nd = c.dropFrom[L] - c.dropFrom[0];
    const words = 1 + 2 * L + na + 2 * nd;
    const rec = this.scratch(words);
    rec[0] = nBlocks;
    let o = 1 + 2 * L;
    let d = o + na;
    let bound = 0;
    for (let l = 0; l < L; l++) {
      const base = l * M;
      let prev = -1;
      for (let i = c.addFrom[l]; i < c.addFrom[l + 1]; i++) {
        const b = c.added[i];
        if (!(b >= 0 && b < M)) throw new Error(`next-use index: step ${t} layer ${l}: block ${b} outside 0..${M - 1}`);
        if (!(b > prev)) throw notAscending(t, l, prev, b);
        if (member[base + b] !== 0) throw new Error(`next-use index: step ${t} layer ${l}: block ${b} added while used`);
        member[base + b] = 1;
        rec[o++] = b;
        prev = b;
      }
      if (prev + 1 > bound) bound = prev + 1;
      prev = -1;
      for (let i = c.dropFrom[l]; i < c.dropFrom[l + 1]; i++) {
        const b = c.dropped[i];
        if (!(b >= 0 && b < M)) throw new Error(`next-use index: step ${t} layer ${l}: block ${b} outside 0..${M - 1}`);
        if (!(b > prev)) throw notAscending(t, l, prev, b);
        // (a block both added and dropped at one step is neither)
        if (member[base + b] !== 1 || inRange(c.added, c.addFrom[l], c.addFrom[l + 1], b)) throw new Error(`next-use index: step ${t} layer ${l}: block ${b} dropped while not used`);
        member[base + b] = 0;
        rec[d++] = b;
        prev = b;
      }
      rec[1 + l] = c.addFrom[l + 1] - c.addFrom[l];
      rec[1 + L + l] = c.dropFrom[l + 1] - c.dropFrom[l];
    }
    rec.fill(0, d, words);
    this.changesBound = bound;
    return words;
  }

  /** Write a[0, words) at byte `pos` of the records (moving them all to the spill file past memoryBytes). */
  private store(a: Int32Array, words: number, pos: number): void {
    const at = pos / 4;
    const end = at + words;
    if (this.mem !== null) {
      if (end * 4 <= this.memoryBytes) {
        if (this.mem.length < end) {
          const grown = new Int32Array(Math.max(end, 2 * this.mem.length));
          grown.set(this.mem.subarray(0, this.memWords));
          this.mem = grown;
        }
        this.mem.set(a.subarray(0, words), at);
        this.memWords = Math.max(this.memWords, end);
        return;
      }
      this.openSpill();
      writeAll(this.fd!, this.mem, this.memWords, 0);
      this.mem = null;
    }
    writeAll(this.fd!, a, words, pos);
  }

  private openSpill(): void {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvtier-next-use-'));
    const file = path.join(dir, 'uses.bin');
    this.fd = fs.openSync(file, 'w+');
    try {
      fs.unlinkSync(file);
      fs.rmdirSync(dir);
    } catch {
      // (a system that cannot unlink an open file: removed at close)
      this.removeAtClose = { file, dir };
    }
  }

  /** Step t's uses (t at or after the last loaded step; one record is held at a time). */
  load(t: number): UseRecord {
    if (this.loaded?.step === t) return this.loaded;
    this.checkStep(t);
    if (!this.setsKept) throw new Error(`next-use index: step ${t}'s used lists asked after seek() passed steps without them`);
    const L = this.layers;
    while (this.applied < t) {
      // apply the record ahead (step applied + 1), then read the one after it
      const c = this.ahead!;
      const srcFrom = this.setFrom[this.which];
      const size = srcFrom[L] + c.added.length - c.dropped.length;
      if (this.setCap < size) {
        const cap = Math.max(size, 2 * this.setCap);
        const grown = new Int32Array(2 * cap);
        grown.set(this.setBuf.subarray(this.which * this.setCap, this.which * this.setCap + srcFrom[L]), this.which * cap);
        this.setBuf = grown;
        this.setCap = cap;
      }
      const S = this.setBuf;
      const so = this.which * this.setCap;
      const dso = (1 - this.which) * this.setCap;
      const dstFrom = this.setFrom[1 - this.which];
      const nx = c.step + 1 < this.never ? this.read(c.step + 1, this.aheadBuf === c.words ? this.buf : this.aheadBuf) : null;
      const added = c.added;
      const dropped = c.dropped;
      let o = dso;
      for (let l = 0; l < L; l++) {
        dstFrom[l] = o - dso;
        let i = so + srcFrom[l];
        const iEnd = so + srcFrom[l + 1];
        let a = c.addFrom[l];
        const aEnd = c.addFrom[l + 1];
        let d = c.dropFrom[l];
        const dEnd = c.dropFrom[l + 1];
        // the set less the dropped blocks (a sub-list of it), merged with the added ones: the runs of
        // the set between changes (ends found by a galloping search) copied as they are
        while (a < aEnd || d < dEnd) {
          const nextAdd = a < aEnd ? added[a] : NONE;
          const nextDrop = d < dEnd ? dropped[d] : NONE;
          const v = nextAdd < nextDrop ? nextAdd : nextDrop;
          // k: the first place in [i, iEnd) holding v or more (iEnd when none)
          let k = i;
          if (k < iEnd && S[k] < v) {
            let lo = i;
            let bound = 1;
            while (i + bound < iEnd && S[i + bound] < v) {
              lo = i + bound;
              bound *= 2;
            }
            let hi = Math.min(i + bound, iEnd);
            while (hi - lo > 1) {
              const mid = (lo + hi) >>> 1;
              if (S[mid] < v) lo = mid;
              else hi = mid;
            }
            k = hi;
          }
          o = copyRun(S, o, i, k);
          i = k;
          if (v === nextDrop) {
            i++;
            d++;
          } else {
            S[o++] = v;
            a++;
          }
        }
        o = copyRun(S, o, i, iEnd);
      }
      dstFrom[L] = o - dso;
      this.which = 1 - this.which;
      this.applyAhead(c, nx);
    }
    const from = Int32Array.from(this.setFrom[this.which]);
    const at = this.which * this.setCap;
    const blocks = this.setBuf.subarray(at, at + from[L]);
    // (the next uses are written when first asked for)
    let next: Int32Array | null = null;
    const rec: UseRecord = {
      step: t,
      nBlocks: this.nBlocks,
      from,
      blocks,
      get next(): Int32Array {
        return (next ??= nextUses(rec));
      },
    };
    const nextUses = (r: UseRecord): Int32Array => this.nextUses(r);
    this.loaded = rec;
    this.at = t;
    if (t === this.never - 1) this.close();
    return rec;
  }

  /**
   * Move the cursor to step t (at or after the step it is at) as load(t) does, for changesOf, nBlocksNow
   * and the layers' advance, without the used lists: load() cannot be called after a seek that passed
   * a step.
   */
  seek(t: number): void {
    if (this.at === t) return;
    this.checkStep(t);
    if (this.applied < t) this.setsKept = false;
    while (this.applied < t) {
      const c = this.ahead!;
      const nx = c.step + 1 < this.never ? this.read(c.step + 1, this.aheadBuf === c.words ? this.buf : this.aheadBuf) : null;
      this.applyAhead(c, nx);
    }
    this.loaded = null;
    this.at = t;
    if (t === this.never - 1) this.close();
  }

  /** the context's block count at the step the cursor is at */
  get nBlocksNow(): number {
    return this.nBlocks;
  }

  private checkStep(t: number): void {
    if (!(t >= 0 && t < this.never)) throw new Error(`next-use index: step ${t} outside 0..${this.never - 1}`);
    if (this.at >= 0 && t < this.at) throw new Error(`next-use index: step ${t} asked after step ${this.at} (the cursor only moves forward)`);
  }

  /** The record ahead (c) is applied; nx, the one after it, is held ahead. */
  private applyAhead(c: Changes, nx: Changes | null): void {
    this.applied = c.step;
    this.current = c;
    this.nBlocks = c.nBlocks;
    // (the buffer just applied takes the record after the next one)
    this.buf = c.words;
    this.ahead = nx;
    if (nx) this.aheadBuf = nx.words;
  }

  /** the step the cursor is at (-1: none yet) */
  private at = -1;
  /** false once seek() passed a step without rebuilding the used lists */
  private setsKept = true;

  /** The loaded record's next uses: the next step, except the blocks the next step drops (their slots). */
  private nextUses(r: UseRecord): Int32Array {
    if (this.loaded !== r) throw new Error(`next-use index: next uses of step ${r.step} asked after step ${this.at} was loaded`);
    const L = this.layers;
    const total = r.from[L];
    if (this.next.length < total) this.next = new Int32Array(Math.max(total, 2 * this.next.length));
    const next = this.next;
    const nx = this.ahead;
    if (nx === null) next.fill(this.never, 0, total);
    else {
      next.fill(r.step + 1, 0, total);
      for (let l = 0; l < L; l++) {
        let j = r.from[l];
        for (let e = nx.dropFrom[l]; e < nx.dropFrom[l + 1]; e++) {
          const x = nx.dropped[e];
          while (r.blocks[j] !== x) j++;
          next[j] = nx.slots[e];
        }
      }
    }
    return next.subarray(0, total);
  }

  private nBlocks = 0;

  /**
   * The changes step s made to the used sets, s being the loaded step or the one after it (null for
   * s = never): views valid until the next load.
   */
  changesOf(s: number): StepChanges | null {
    if (this.at < 0 || (s !== this.at && s !== this.at + 1)) {
      throw new Error(`next-use index: changes of step ${s} asked with step ${this.at >= 0 ? this.at : 'none'} loaded (the loaded step or the next one)`);
    }
    if (s === this.never) return null;
    return s === this.applied ? this.current : this.ahead;
  }

  /** First use of layer l's block b at or after the layer's current step (stepOf), or never. */
  nextUseOf(l: number, b: number): number {
    const k = l * this.maxBlocks + b;
    return this.usedNow[k] === 1 ? this.cursor[l] : this.later[k];
  }

  /**
   * Move layer l past step t (the loaded one): the blocks step t + 1 adds are marked used, the ones it
   * drops take their next use (after the last step, every block used at t is never used again).
   */
  advance(l: number, t: number): void {
    if (this.cursor[l] !== t) throw new Error(`next-use index: layer ${l} is at step ${this.cursor[l]}, asked to pass step ${t}`);
    if (this.setsKept) this.load(t);
    else this.seek(t);
    const base = l * this.maxBlocks;
    const c = this.ahead;
    if (c === null) {
      // after the last step: every block used at t is never used again (its mark cleared)
      const used = this.usedNow;
      const later = this.later;
      const never = this.never;
      for (let b = 0; b < this.blockBound; b++) {
        if (used[base + b] === 1) {
          used[base + b] = 0;
          later[base + b] = never;
        }
      }
      this.usedCount[l] = 0;
    } else {
      for (let i = c.dropFrom[l]; i < c.dropFrom[l + 1]; i++) {
        this.usedNow[base + c.dropped[i]] = 0;
        this.later[base + c.dropped[i]] = c.slots[i];
      }
      for (let i = c.addFrom[l]; i < c.addFrom[l + 1]; i++) this.usedNow[base + c.added[i]] = 1;
      this.usedCount[l] += c.addFrom[l + 1] - c.addFrom[l] - (c.dropFrom[l + 1] - c.dropFrom[l]);
    }
    this.cursor[l] = t + 1;
  }

  /** The step layer l's nextUseOf describes. */
  stepOf(l: number): number {
    return this.cursor[l];
  }

  /** Drop the records, closing the spill file if any (done by itself once the last step is loaded). */
  close(): void {
    this.closed = true;
    this.mem = null;
    if (this.fd === null) return;
    fs.closeSync(this.fd);
    this.fd = null;
    if (this.removeAtClose) {
      fs.rmSync(this.removeAtClose.dir, { recursive: true, force: true });
      this.removeAtClose = null;
    }
  }

  private scratch(words: number): Int32Array {
    if (this.buf.length < words) this.buf = new Int32Array(Math.max(words, 2 * this.buf.length));
    return this.buf;
  }

  /** Read step s's record into `into` (or a larger buffer, returned as words). */
  private read(s: number, into: Int32Array): Changes {
    if (this.closed) throw new Error('next-use index: the records are closed');
    const L = this.layers;
    const bytes = this.offsets[s + 1] - this.offsets[s];
    const n = bytes / 4;
    const rec = into.length >= n ? into : new Int32Array(Math.max(n, 2 * into.length));
    if (this.mem !== null) rec.set(this.mem.subarray(this.offsets[s] / 4, this.offsets[s] / 4 + n));
    else readAll(this.fd!, rec, n, this.offsets[s]);
    const addFrom = new Int32Array(L + 1);
    const dropFrom = new Int32Array(L + 1);
    for (let l = 0; l < L; l++) {
      addFrom[l + 1] = addFrom[l] + rec[1 + l];
      dropFrom[l + 1] = dropFrom[l] + rec[1 + L + l];
    }
    const na = addFrom[L];
    const nd = dropFrom[L];
    const at = 1 + 2 * L;
    return {
      step: s,
      nBlocks: rec[0],
      addFrom,
      dropFrom,
      added: rec.subarray(at, at + na),
      dropped: rec.subarray(at + na, at + na + nd),
      slots: rec.subarray(at + na + nd, at + na + 2 * nd),
      words: rec,
      slotsAt: at + na + nd,
    };
  }
}

/** whether a[from, to) (ascending) holds x */
function inRange(a: Int32Array, from: number, to: number, x: number): boolean {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo < to && a[lo] === x;
}

function notAscending(t: number, l: number, a: number, b: number): Error {
  return new Error(`next-use index: step ${t} layer ${l}: blocks not strictly ascending (${a} then ${b})`);
}

/** above every block */
const NONE = 0x7fffffff;

/** Copy a[from, to) to a[at, ...) (regions apart); the end of the copy. */
function copyRun(a: Int32Array, at: number, from: number, to: number): number {
  const n = to - from;
  if (n > 16) a.copyWithin(at, from, to);
  else for (let k = 0; k < n; k++) a[at + k] = a[from + k];
  return at + n;
}

function writeAll(fd: number, a: Int32Array, words: number, pos: number): void {
  const bytes = new Uint8Array(a.buffer, a.byteOffset, words * 4);
  let done = 0;
  while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done, pos + done);
}

function readAll(fd: number, a: Int32Array, words: number, pos: number): void {
  const bytes = new Uint8Array(a.buffer, a.byteOffset, words * 4);
  let done = 0;
  while (done < bytes.length) {
    const n = fs.readSync(fd, bytes, done, bytes.length - done, pos + done);
    if (n === 0) throw new Error(`next-use index: the spill file ended at byte ${pos + done} (expected ${pos + bytes.length})`);
    done += n;
  }
}
