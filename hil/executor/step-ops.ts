/**
 * The ops of the step being lowered, and what they count: timing marks (numbered over the whole
 * run), memory-stream busy spans, and bytes per link direction. Copies of a batch are coalesced
 * (copy-runs.ts) and bracketed by marks; (de)quantization goes through an FP16 scratch block where
 * both ends are quantized.
 */
import { type BlockGeometry, PRECISION_OF_BITS, blockBytes } from '../kv-format.js';
import { align, coalesceCopies } from './copy-runs.js';
import { MEMORY, type StreamIx } from './fences.js';
import { fileRuns } from './file-runs.js';
import type { LowOp, RegionName } from './lowered-plan.js';


export class StepOps {
  ops: LowOp[] = [];
  bytes: Record<string, number> = {};
  memSpans: [number, number, string][] = [];
  markCount = 0;

  constructor(private readonly g: BlockGeometry) {}

  /** start a step: no ops yet, every link key at 0 bytes */
  begin(linkKeys: readonly string[]): void {
    this.ops = [];
    this.bytes = Object.fromEntries(linkKeys.map((k) => [k, 0]));
    this.memSpans = [];
  }

  push(op: LowOp): void {
    this.ops.push(op);
  }

  /** bytes of a block at `bits` */
  bb(bits: number): number {
    return blockBytes(this.g, PRECISION_OF_BITS[bits]!);
  }

  count(keys: string[], n: number): void {
    for (const k of keys) this.bytes[k] = (this.bytes[k] ?? 0) + n;
  }

  mark(s: StreamIx): number {
    const id = this.markCount++;
    this.ops.push({ o: 'mark', s, id });
    return id;
  }

  /** Coalesced copies on the memory stream (one busy span): pairs of (src, dst, bytes). */
  copies(label: string, src: RegionName, dst: RegionName, list: [number, number, number][], links: string[]): void {
    if (list.length === 0) return;
    const m0 = this.mark(MEMORY);
    for (const [srcOff, dstOff, bytes] of coalesceCopies(list)) this.ops.push({ o: 'copy', s: MEMORY, src, srcOff, dst, dstOff, bytes });
    this.memSpans.push([m0, this.mark(MEMORY), label]);
    this.count(links, list.reduce((a, x) => a + x[2], 0));
  }

  /** file requests of one batch (file-runs.ts) */
  file(kind: 'fileRead' | 'fileWrite', list: [number, number][]): void {
    for (const op of fileRuns(kind, list)) this.ops.push(op);
  }

  /** (de)quantization kernels on the memory stream; scratch holds an intermediate FP16 block */
  convert(src: RegionName, srcOff: number, fromBits: number, dst: RegionName, dstOff: number, toBits: number): void {
    if (fromBits === toBits) {
      this.ops.push({ o: 'copy', s: MEMORY, src, srcOff, dst, dstOff, bytes: this.bb(fromBits) });
    } else if (fromBits === 16) {
      this.ops.push({ o: 'quant', src, srcOff, dst, dstOff, bits: toBits as 2 | 3 | 4 | 8 });
    } else if (toBits === 16) {
      this.ops.push({ o: 'dequant', src, srcOff, dst, dstOff, bits: fromBits as 2 | 3 | 4 | 8 });
    } else {
      const mid = align(blockBytes(this.g, 'fp16'), 4096);
      this.ops.push({ o: 'dequant', src, srcOff, dst: 'scratch', dstOff: mid, bits: fromBits as 2 | 3 | 4 | 8 });
      this.ops.push({ o: 'quant', src: 'scratch', srcOff: mid, dst, dstOff, bits: toBits as 2 | 3 | 4 | 8 });
    }
  }
}
