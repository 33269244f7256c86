/**
 * The DRAM slots that NVMe requests bounce through, and what the host must wait for before reusing
 * one: a file request from a slot a memory-stream copy used waits for that copy (the host
 * synchronizes the memory stream once for all copies issued by then), and any use of a slot waits
 * for a file write still reading it. Slots are slotBytes wide; a request spans every slot it touches.
 */
import type { NativeBackend } from '../addon-types.js';
import type { FileStepTimes } from './file-step-times.js';
import type { LowOp } from './lowered-plan.js';

export class BounceSlots {
  private readonly pendingWrite = new Map<number, Promise<unknown>>();
  /** memory-stream copies issued, and issued by the last synchronization */
  private memIssued = 0;
  private memSynced = 0;
  /** per slot, the memory-stream copy that used it last */
  private readonly memSeq = new Map<number, number>();

  constructor(
    private readonly b: NativeBackend,
    private readonly slot: number,
    private readonly times: FileStepTimes,
  ) {}

  /** the first and one past the last slot a request of `bytes` at `off` touches */
  private first(off: number): number {
    return Math.floor(off / this.slot);
  }
  private end(off: number, bytes: number): number {
    return Math.ceil((off + bytes) / this.slot);
  }

  /**
   * a copy on the memory stream is about to be issued: one into DRAM waits for file writes from its
   * slots (a promise, only then); its DRAM slots remember it
   */
  memoryCopy(op: Extract<LowOp, { o: 'copy' }>): Promise<void> | undefined {
    if (op.dst === 'dram' && this.writePending(op.dstOff, op.bytes)) return this.awaitWrites(op.dstOff, op.bytes).then(() => this.copied(op));
    this.copied(op);
    return undefined;
  }

  private copied(op: Extract<LowOp, { o: 'copy' }>): void {
    this.memIssued++;
    if (op.src === 'dram') this.mark(op.srcOff, op.bytes);
    if (op.dst === 'dram') this.mark(op.dstOff, op.bytes);
  }

  private mark(off: number, bytes: number): void {
    for (let s = this.first(off), e = this.end(off, bytes); s < e; s++) this.memSeq.set(s, this.memIssued);
  }

  /** whether a file request on these slots may go at once: no file write still reads them, no copy not yet synchronized used them */
  ready(off: number, bytes: number): boolean {
    return !this.writePending(off, bytes) && !this.unsynced(off, bytes);
  }

  private writePending(off: number, bytes: number): boolean {
    if (this.pendingWrite.size === 0) return false;
    for (let s = this.first(off), e = this.end(off, bytes); s < e; s++) if (this.pendingWrite.has(s)) return true;
    return false;
  }

  private unsynced(off: number, bytes: number): boolean {
    for (let s = this.first(off), e = this.end(off, bytes); s < e; s++) if ((this.memSeq.get(s) ?? 0) > this.memSynced) return true;
    return false;
  }

  /** before a file request from these slots: synchronize the memory stream if a copy not yet synchronized used one */
  async syncMemoryIfNeeded(off: number, bytes: number, si: number): Promise<void> {
    if (!this.unsynced(off, bytes)) return;
    const at = this.memIssued;
    const t = performance.now();
    await this.b.synchronize('memory');
    this.times.syncMs[si] += performance.now() - t;
    this.times.syncs[si]++;
    this.memSynced = at;
  }

  /** wait for file writes still reading these slots (their wait counted to step si where si >= 0) */
  async awaitWrites(off: number, bytes: number, si = -1): Promise<void> {
    for (let s = this.first(off), e = this.end(off, bytes); s < e; s++) {
      const w = this.pendingWrite.get(s);
      if (w) {
        const t = performance.now();
        await w;
        if (si >= 0) this.times.syncMs[si] += performance.now() - t;
        this.pendingWrite.delete(s);
      }
    }
  }

  /** a file write from these slots is in flight */
  writing(off: number, bytes: number, w: Promise<unknown>): void {
    for (let s = this.first(off), e = this.end(off, bytes); s < e; s++) this.pendingWrite.set(s, w);
  }

  /** every file write still in flight */
  allWrites(): Promise<unknown[]> {
    return Promise.all(this.pendingWrite.values());
  }
}
