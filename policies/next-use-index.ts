/**
 * Next use of every (layer, block), streamed: what Belady's MIN needs, in memory O(layers x blocks)
 * whatever the number of steps.
 *
 * Two passes over a spill file (unlinked as soon as it is open, so nothing is left behind):
 *  1. forward over the steps: each step's used blocks per layer are appended as one record
 *     [nBlocks, count per layer..., blocks..., next-use slots...];
 *  2. backward over the records: for each listed (t, l, b) the slot gets the next step > t at which
 *     (l, b) is used (`never` if none) from a running array `last[l][b]`, which ends as every block's
 *     first use.
 * Then a forward cursor reads one record at a time: `load(t)` gives step t's uses and their next
 * uses; per layer, `nextUse` holds each block's first use at or after the layer's current step, and
 * `advance(l, t)` moves the layer past step t (its blocks used at t take their next use).
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
  /** next[i]: the next step after this one at which blocks[i] (of its layer) is used, or `never` */
  next: Int32Array;
  from: Int32Array;
}

export class NextUseIndex {
  /** the value standing for "never used again": the number of steps */
  readonly never: number;
  /** per layer x block (l * maxBlocks + b): first use at or after the layer's current step, or never */
  readonly nextUse: Int32Array;
  /** per layer: the step nextUse describes (uses before it are consumed) */
  private readonly cursor: Int32Array;
  /** byte offset of each step's record in the spill file, and the end */
  private readonly offsets: Float64Array;
  private fd: number | null;
  private buf = new Int32Array(0);
  private loaded: UseRecord | null = null;

  /**
   * Build the index from `steps`, consecutive from step 0: each gives its context's block count and
   * each layer's used blocks (ascending, each below `maxBlocks`).
   */
  constructor(
    readonly layers: number,
    readonly maxBlocks: number,
    steps: Iterable<{ nBlocks: number; uses: readonly Int32Array[] }>,
  ) {
    const L = layers;
    const M = maxBlocks;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvtier-next-use-'));
    const file = path.join(dir, 'uses.bin');
    this.fd = fs.openSync(file, 'w+');
    let removed = false;
    try {
      fs.unlinkSync(file);
      fs.rmdirSync(dir);
      removed = true;
    } catch {
      // (a system that cannot unlink an open file: removed at close)
    }
    this.removeAtClose = removed ? null : { file, dir };
    try {
      // pass 1: forward, append each step's uses
      const offs: number[] = [0];
      let pos = 0;
      let t = 0;
      for (const s of steps) {
        const lists = s.uses;
        if (lists.length !== L) throw new Error(`next-use index: step ${t}: ${lists.length} layers of uses, expected ${L}`);
        let total = 0;
        for (const u of lists) total += u.length;
        const words = 1 + L + 2 * total;
        const rec = this.scratch(words);
        rec[0] = s.nBlocks;
        let o = 1 + L;
        for (let l = 0; l < L; l++) {
          const u = lists[l];
          rec[1 + l] = u.length;
          for (let i = 0; i < u.length; i++) {
            const b = u[i];
            if (!(b >= 0 && b < M)) throw new Error(`next-use index: step ${t} layer ${l}: block ${b} outside 0..${M - 1}`);
            rec[o++] = b;
          }
        }
        rec.fill(0, o, words);
        writeAll(this.fd, rec, words, pos);
        pos += words * 4;
        offs.push(pos);
        t++;
      }
      this.offsets = Float64Array.from(offs);
      this.never = t;
      // pass 2: backward, fill the next-use slots
      const last = new Int32Array(L * M).fill(t);
      for (let s = t - 1; s >= 0; s--) {
        const r = this.read(s);
        for (let l = 0; l < L; l++) {
          const base = l * M;
          for (let i = r.from[l]; i < r.from[l + 1]; i++) {
            const k = base + r.blocks[i];
            r.next[i] = last[k];
            last[k] = s;
          }
        }
        const nextAt = this.offsets[s] + (1 + L + r.blocks.length) * 4;
        writeAll(this.fd, r.next, r.next.length, nextAt);
      }
      this.nextUse = last;
      this.cursor = new Int32Array(L);
      this.loaded = null;
      if (t === 0) this.close();
    } catch (e) {
      this.close();
      throw e;
    }
  }

  private removeAtClose: { file: string; dir: string } | null;

  /** Step t's uses (t at or after the last loaded step; one record is held at a time). */
  load(t: number): UseRecord {
    if (this.loaded?.step === t) return this.loaded;
    if (!(t >= 0 && t < this.never)) throw new Error(`next-use index: step ${t} outside 0..${this.never - 1}`);
    if (this.loaded && t < this.loaded.step) throw new Error(`next-use index: step ${t} asked after step ${this.loaded.step} (the cursor only moves forward)`);
    this.loaded = this.read(t);
    if (t === this.never - 1) this.close();
    return this.loaded;
  }

  /** Move layer l past step t (the loaded one): its blocks used at t take their next use. */
  advance(l: number, t: number): void {
    if (this.cursor[l] !== t) throw new Error(`next-use index: layer ${l} is at step ${this.cursor[l]}, asked to pass step ${t}`);
    const r = this.load(t);
    const base = l * this.maxBlocks;
    for (let i = r.from[l]; i < r.from[l + 1]; i++) this.nextUse[base + r.blocks[i]] = r.next[i];
    this.cursor[l] = t + 1;
  }

  /** The step layer l's nextUse describes. */
  stepOf(l: number): number {
    return this.cursor[l];
  }

  /** Close the spill file (done by itself once the last step is loaded). */
  close(): void {
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

  private read(s: number): UseRecord {
    if (this.fd === null) throw new Error('next-use index: the spill file is closed');
    const L = this.layers;
    const bytes = this.offsets[s + 1] - this.offsets[s];
    const words = bytes / 4;
    const rec = this.scratch(words);
    readAll(this.fd, rec, words, this.offsets[s]);
    const from = new Int32Array(L + 1);
    for (let l = 0; l < L; l++) from[l + 1] = from[l] + rec[1 + l];
    const total = from[L];
    return { step: s, nBlocks: rec[0], from, blocks: rec.subarray(1 + L, 1 + L + total), next: rec.subarray(1 + L + total, 1 + L + 2 * total) };
  }
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
