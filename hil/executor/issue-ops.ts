/**
 * Issues the lowered ops of every step on the backend, in order, without synchronizing (as an
 * inference engine would): copies, (de)quantization and fences on their streams, attention over the
 * block table and GEMVs on the compute stream, timing marks; file requests on the NVMe tier. The host
 * waits only where real data needs it (bounce-slots.ts), and for the reads of a layer at their join.
 */
import type { ModelSpec } from '../../sim/models/model.js';
import type { NativeBackend, NativeFileTier, StreamName } from '../addon-types.js';
import { PRECISION_OF_BITS, blockBytes, kMetaOffset, sectionElems } from '../kv-format.js';
import { BounceSlots } from './bounce-slots.js';
import type { FileStepTimes } from './file-step-times.js';
import { convertBlock } from './host-convert.js';
import type { LoweredPlan, LowOp } from './lowered-plan.js';
import type { ModelBuffers } from './model-buffers.js';
import type { RunEvents } from './run-events.js';
import type { RunRegions } from './run-regions.js';

const STREAMS: StreamName[] = ['compute', 'memory'];

/** what the issuer reads of a lowered plan (a whole plan, or a list of ops timed on its own: bench/issue-bench.ts) */
export type IssuedPlan = Pick<LoweredPlan, 'geometry' | 'slotBytes' | 'arenaBytes' | 'weights'> & { steps: readonly { readonly ops: readonly LowOp[] }[] };

export interface IssueOptions {
  /** file reads before a join as one batch (true) or one request each */
  fileBatch: boolean;
  /** events around the memory stream's waits on compute */
  waitMarks: boolean;
}

export class OpIssuer {
  private readonly bounce: BounceSlots;
  private pendingReads: Promise<{ ms: number }>[] = [];
  private batchReads: number[] = [];
  private readonly n2: number;

  constructor(
    private readonly b: NativeBackend,
    private readonly p: IssuedPlan,
    private readonly model: ModelSpec,
    private readonly mem: RunRegions,
    private readonly w: ModelBuffers,
    private readonly ev: RunEvents,
    private readonly times: FileStepTimes,
    private readonly o: IssueOptions,
  ) {
    this.bounce = new BounceSlots(b, p.slotBytes, times);
    this.n2 = 2 * sectionElems(p.geometry);
  }

  async issueAll(): Promise<void> {
    for (let si = 0; si < this.p.steps.length; si++) {
      const t0 = performance.now();
      const ops = this.p.steps[si].ops;
      for (const op of ops) {
        const pending = this.issue(op, si);
        if (pending) await pending;
      }
      this.times.issueMs[si] = performance.now() - t0;
    }
  }

  /** every file write still in flight */
  writesDone(): Promise<unknown[]> {
    return this.bounce.allWrites();
  }

  private get file(): NativeFileTier {
    return this.mem.file!;
  }

  /** issues one op; a promise only where the host must wait (file requests, bounce slots, a host wait) */
  private issue(op: LowOp, si: number): Promise<void> | undefined {
    switch (op.o) {
      case 'copy': {
        // (with a file tier a memory-stream copy waits only for file writes still reading its DRAM slots)
        const wait = op.s === 1 && this.mem.file !== undefined ? this.bounce.memoryCopy(op) : undefined;
        if (wait) return wait.then(() => this.copy(op));
        this.copy(op);
        return undefined;
      }
      case 'fileRead':
        // (a read into slots nothing still uses joins the batch at once)
        if (this.o.fileBatch && this.bounce.ready(op.offset, op.bytes)) {
          this.batchReads.push(op.offset, op.offset, op.bytes);
          return undefined;
        }
        return this.issueWaiting(op, si);
      case 'fileJoin':
      case 'fileWrite':
      case 'hostWaitCompute':
      case 'hostConvert':
        return this.issueWaiting(op, si);
      default:
        this.issueNow(op, si);
        return undefined;
    }
  }

  private copy(op: Extract<LowOp, { o: 'copy' }>): void {
    this.b.copy(STREAMS[op.s], this.mem.r(op.dst), op.dstOff, this.mem.r(op.src), op.srcOff, op.bytes);
  }

  private issueNow(op: LowOp, si: number): void {
    const { b, p, model, mem, w, ev } = this;
    const g = p.geometry;
    const r = (name: Parameters<RunRegions['r']>[0]) => mem.r(name);
    switch (op.o) {
      case 'quant':
        b.quantize('memory', { src: r(op.src), srcOffset: op.srcOff, codes: r(op.dst), codesOffset: op.dstOff, meta: r(op.dst), metaOffset: op.dstOff + kMetaOffset(g, PRECISION_OF_BITS[op.bits]!), n: this.n2, bits: op.bits, groupSize: g.groupSize });
        return;
      case 'dequant':
        b.dequantize('memory', { codes: r(op.src), codesOffset: op.srcOff, meta: r(op.src), metaOffset: op.srcOff + kMetaOffset(g, PRECISION_OF_BITS[op.bits]!), dst: r(op.dst), dstOffset: op.dstOff, n: this.n2, bits: op.bits, groupSize: g.groupSize });
        return;
      case 'mark':
        b.record(STREAMS[op.s], ev.marks[op.id]);
        return;
      case 'rotate':
        if (op.what === 'block') b.hadamard(STREAMS[op.s], { data: r(op.region!), dataOffset: op.offset!, rows: 2 * g.kvHeads * g.blockTokens, n: g.headDim, dtype: 'f16' });
        else b.hadamard(STREAMS[op.s], { data: op.what === 'q' ? w.q : w.out, rows: model.q_heads, n: model.head_dim, dtype: 'f32' });
        return;
      case 'record':
        b.record(STREAMS[op.s], ev.fences[op.s][op.fence]);
        return;
      case 'wait':
        if (this.o.waitMarks && op.s === 1) {
          const pair: [number, number] = [ev.events.make(), ev.events.make()];
          b.record('memory', pair[0]);
          b.waitEvent(STREAMS[op.s], ev.fences[op.on][op.fence]);
          b.record('memory', pair[1]);
          ev.waitPairs[si].push(pair);
          return;
        }
        b.waitEvent(STREAMS[op.s], ev.fences[op.on][op.fence]);
        return;
      case 'attn':
        b.attention('compute', {
          arena: r('arena'),
          arenaBytes: p.arenaBytes,
          table: mem.tables,
          tableOffset: op.tableOff,
          q: w.q,
          out: w.out,
          qHeads: model.q_heads,
          kvHeads: model.kv_heads,
          headDim: model.head_dim,
          blockTokens: g.blockTokens,
          groupSize: g.groupSize,
          contextTokens: op.tokens,
          // the table's promise (checked where the table is host-readable): the cuda backend then runs
          // the tensor-core kernel for uniform INT4 tables, as the calibration's attention benchmark does
          ...(op.uniform ? { uniformPrecision: PRECISION_OF_BITS[op.uniform]! } : {}),
        });
        return;
      case 'gemv':
        if (op.lmHead) {
          if (w.head >= 0) b.gemv('compute', { w: w.head, x: w.x, y: w.y, rows: w.headRows, cols: w.cols });
        } else if (op.slot !== undefined) {
          // a streamed layer: its weights' bytes as copied into the slot
          b.gemv('compute', { w: mem.r('wslots'), wOffset: op.slot * p.weights!.strideBytes, x: w.x, y: w.y, rows: w.streamedRows, cols: w.cols });
        } else {
          b.gemv('compute', { w: w.weights[op.layer % w.weights.length], x: w.x, y: w.y, rows: w.rows, cols: w.cols });
        }
        return;
      default:
        throw new Error(`hil: op ${op.o} needs the host to wait`);
    }
  }

  private async issueWaiting(op: LowOp, si: number): Promise<void> {
    const { b, mem, times } = this;
    const r = (name: Parameters<RunRegions['r']>[0]) => mem.r(name);
    switch (op.o) {
      case 'fileRead': {
        await this.bounce.awaitWrites(op.offset, op.bytes, si);
        await this.bounce.syncMemoryIfNeeded(op.offset, op.bytes, si);
        // the file offset is the DRAM slot's offset: the slot is the bounce buffer
        if (this.o.fileBatch) this.batchReads.push(op.offset, op.offset, op.bytes);
        else this.pendingReads.push(this.file.read(r('dram'), op.offset, op.offset, op.bytes));
        return;
      }
      case 'hostWaitCompute': {
        const t0 = performance.now();
        await b.synchronize('compute');
        times.computeWaitMs[si] += performance.now() - t0;
        return;
      }
      case 'hostConvert': {
        // the slots' pending file writes and memory-stream copies finish first
        const tracked = this.mem.file !== undefined && op.src === 'dram' && op.dst === 'dram';
        if (tracked) {
          await this.bounce.awaitWrites(op.srcOff, this.p.slotBytes, si);
          await this.bounce.awaitWrites(op.dstOff, this.p.slotBytes, si);
          await this.bounce.syncMemoryIfNeeded(op.srcOff, this.p.slotBytes, si);
          await this.bounce.syncMemoryIfNeeded(op.dstOff, this.p.slotBytes, si);
        } else await b.synchronize('memory');
        const g = this.p.geometry;
        const src = b.read(r(op.src), op.srcOff, blockBytes(g, PRECISION_OF_BITS[op.fromBits]!));
        b.write(r(op.dst), op.dstOff, convertBlock(g, op.fromBits, op.toBits, src));
        return;
      }
      case 'fileJoin': {
        const t0 = performance.now();
        if (this.batchReads.length) {
          const res = await this.file.readBatch(r('dram'), new Float64Array(this.batchReads));
          this.batchReads = [];
          times.fileMs[si] += res.ms;
          times.readMs[si] += res.ms;
        } else {
          const res = await Promise.all(this.pendingReads);
          this.pendingReads = [];
          for (const x of res) {
            times.fileMs[si] += x.ms;
            times.readMs[si] += x.ms;
          }
        }
        times.joinMs[si] += performance.now() - t0;
        return;
      }
      case 'fileWrite': {
        await this.bounce.awaitWrites(op.offset, op.bytes, si);
        await this.bounce.syncMemoryIfNeeded(op.offset, op.bytes, si);
        const wr = this.file.write(r('dram'), op.offset, op.offset, op.bytes).then((x) => {
          times.fileMs[si] += x.ms;
        });
        this.bounce.writing(op.offset, op.bytes, wr);
        return;
      }
    }
  }
}
