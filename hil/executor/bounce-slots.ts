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

  private slots(off: number, bytes: number): number[] {
    const out: number[] = [];
    for (let s = Math.floor(off / this.slot); s < Math.ceil((off + bytes) / this.slot); s++) out.push(s);
    return out;
  }

  /** a copy on the memory stream is about to be issued: one into DRAM waits for writes from its slots; its DRAM slots remember it */
  async memoryCopy(op: Extract<LowOp, { o: 'copy' }>): Promise<void> {
    if (op.dst === 'dram') await this.awaitWrites(op.dstOff, op.bytes);
    this.memIssued++;
    for (const [reg, off] of [[op.src, op.srcOff], [op.dst, op.dstOff]] as const) {
      if (reg === 'dram') for (const s of this.slots(off, op.bytes)) this.memSeq.set(s, this.memIssued);
    }
  }

  /** before a file request from these slots: synchronize the memory stream if a copy not yet synchronized used one */
  async syncMemoryIfNeeded(off: number, bytes: number, si: number): Promise<void> {
    for (const s of this.slots(off, bytes)) {
      if ((this.memSeq.get(s) ?? 0) > this.memSynced) {
        const at = this.memIssued;
        const t = performance.now();
        await this.b.synchronize('memory');
        this.times.syncMs[si] += performance.now() - t;
        this.times.syncs[si]++;
        this.memSynced = at;
        return;
      }
    }
  }

  /** wait for file writes still reading these slots (their wait counted to step si where si >= 0) */
  async awaitWrites(off: number, bytes: number, si = -1): Promise<void> {
    for (const s of this.slots(off, bytes)) {
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
    for (const s of this.slots(off, bytes)) this.pendingWrite.set(s, w);
  }

  /** every file write still in flight */
  allWrites(): Promise<unknown[]> {
    return Promise.all(this.pendingWrite.values());
  }
}
