/**
 * Launches, once and before the timed steps, each block kernel a plan runs only now and then: the
 * (de)quantization of every width the plan converts at and the Walsh-Hadamard rotations it uses. On
 * CUDA a kernel's module is loaded at its first launch (lazy loading, the default since CUDA 12.2),
 * and that first launch costs milliseconds of host time: without this, the first step that converts
 * (SmartKV's first re-bucketing step) would pay it inside the measured step, which no later run in
 * the same process does. The launches go to scratch buffers of their own, on the streams the plan
 * issues them on; nothing the plan reads or writes is touched.
 */
import type { NativeBackend, StreamName } from '../addon-types.js';
import { type BlockGeometry, blockBytes, kMetaOffset, PRECISION_OF_BITS, sectionElems } from '../kv-format.js';
import type { LowOp } from './lowered-plan.js';

const STREAMS: readonly StreamName[] = ['compute', 'memory', 'memory2'];

/** the kernels to warm: conversions by kind and width, rotations by stream and data type */
export interface WarmSet {
  quant: number[];
  dequant: number[];
  /** 'f16' blocks and 'f32' query/output rows, with the stream each ran on */
  rotate: { stream: StreamName; dtype: 'f16' | 'f32' }[];
}

/** The distinct block kernels of a plan's steps, in first-use order. */
export function warmSetOf(steps: readonly { ops: readonly LowOp[] }[]): WarmSet {
  const quant = new Set<number>();
  const dequant = new Set<number>();
  const rotate = new Map<string, { stream: StreamName; dtype: 'f16' | 'f32' }>();
  for (const s of steps) {
    for (const op of s.ops) {
      if (op.o === 'quant') quant.add(op.bits);
      else if (op.o === 'dequant') dequant.add(op.bits);
      else if (op.o === 'rotate') {
        const dtype = op.what === 'block' ? 'f16' : 'f32';
        const stream = STREAMS[op.s];
        rotate.set(`${stream}/${dtype}`, { stream, dtype });
      }
    }
  }
  return { quant: [...quant], dequant: [...dequant], rotate: [...rotate.values()] };
}

/**
 * Launches each kernel of `set` once on scratch device buffers sized for one block of `g` (rotations
 * of f32 rows: `qHeads` rows of head_dim) and waits for them; the buffers are freed before it returns.
 * Returns the kernels warmed: one per conversion kind and width and one per rotation (a width that is only
 * dequantized gets a quantization first, on the same scratch, to give it codes; that launch is not counted).
 */
export async function warmKernels(b: NativeBackend, g: BlockGeometry, qHeads: number, set: WarmSet): Promise<number> {
  const launches = set.quant.length + set.dequant.length + set.rotate.length;
  if (launches === 0) return 0;
  const n = 2 * sectionElems(g);
  const fp16Bytes = n * 2;
  const rowsF32 = Math.max(qHeads, 1) * g.headDim * 4;
  const src = b.alloc('device', Math.max(fp16Bytes, rowsF32));
  const dst = b.alloc('device', Math.max(fp16Bytes, blockBytes(g, 'int8')));
  try {
    // small finite values: a group's range is never zero
    const half = new Uint16Array(n);
    for (let i = 0; i < n; i++) half[i] = 0x3c00 + (i % 64); // 1.0 + i % 64 ulps
    b.write(src, 0, half);
    for (const bits of set.quant) {
      const pr = PRECISION_OF_BITS[bits]!;
      b.quantize('memory', { src, srcOffset: 0, codes: dst, codesOffset: 0, meta: dst, metaOffset: kMetaOffset(g, pr), n, bits: bits as 2 | 3 | 4 | 8, groupSize: g.groupSize });
    }
    for (const bits of set.dequant) {
      const pr = PRECISION_OF_BITS[bits]!;
      // the codes and meta a quantization of the same width leaves (or whatever the buffer holds: the values are not read back)
      if (!set.quant.includes(bits)) b.quantize('memory', { src, srcOffset: 0, codes: dst, codesOffset: 0, meta: dst, metaOffset: kMetaOffset(g, pr), n, bits: bits as 2 | 3 | 4 | 8, groupSize: g.groupSize });
      b.dequantize('memory', { codes: dst, codesOffset: 0, meta: dst, metaOffset: kMetaOffset(g, pr), dst: src, dstOffset: 0, n, bits: bits as 2 | 3 | 4 | 8, groupSize: g.groupSize });
    }
    for (const r of set.rotate) {
      if (r.dtype === 'f16') b.hadamard(r.stream, { data: src, dataOffset: 0, rows: 2 * g.kvHeads * g.blockTokens, n: g.headDim, dtype: 'f16' });
      else b.hadamard(r.stream, { data: src, dataOffset: 0, rows: Math.max(qHeads, 1), n: g.headDim, dtype: 'f32' });
    }
    await b.synchronize();
  } finally {
    b.free(src);
    b.free(dst);
  }
  return launches;
}
