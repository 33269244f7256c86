/**
 * Block (de)quantization kernels as the executor issues them (step-ops.ts convert): one kernel per
 * block on the memory stream, back to back, FP16 -> INT8/4/3/2 (quantize) and back (dequantize), at
 * the model's block geometry; with the GPU otherwise idle and with GEMVs running on the compute
 * stream throughout. On cuda each trial waits behind a compute gate (gate.ts), so the host's launch
 * rate is not timed. Point = memory-stream time per kernel (median over trials).
 */
import type { NativeBackend } from '../addon-types.js';
import { type BlockGeometry, blockBytes, kMetaOffset, PRECISION_OF_BITS, sectionElems } from '../kv-format.js';
import { EventSet } from '../timing/event-set.js';
import { median } from '../timing/median.js';
import { timeOp } from '../timing/time-op.js';
import type { ComputeGate } from './gate.js';

export const CONVERT_BITS = [8, 4, 3, 2] as const;

export interface ConvertPoint {
  op: 'quantize' | 'dequantize';
  bits: (typeof CONVERT_BITS)[number];
  condition: 'idle' | 'under compute';
  /** kernels per trial, one block each */
  kernels: number;
  /** memory-stream time per kernel */
  us: number;
  /** compute-stream time after the kernels started / their time, min over trials (>= 1: compute ran throughout; 0: idle) */
  compute_cover: number;
}

export interface ConvertBenchOptions {
  geometry: BlockGeometry;
  kernels: number;
  trials: number;
  /** the compute stream's work under the kernels: a GEMV of this shape, repeated */
  gemvRows: number;
  gemvCols: number;
  gate?: ComputeGate;
}

export async function benchConvertKernels(b: NativeBackend, o: ConvertBenchOptions): Promise<ConvertPoint[]> {
  const g = o.geometry;
  const n = 2 * sectionElems(g);
  const fp16 = blockBytes(g, 'fp16');
  const stride = (bits: number) => Math.ceil(blockBytes(g, PRECISION_OF_BITS[bits]!) / 256) * 256;
  const owned: number[] = [];
  const alloc = (bytes: number) => {
    const r = b.alloc('device', Math.max(4096, bytes));
    owned.push(r);
    return r;
  };
  const events = new EventSet(b);
  try {
    const src = alloc(o.kernels * fp16);
    const out = alloc(o.kernels * fp16);
    const codes = alloc(o.kernels * stride(8));
    // FP16 values in [0.5, 1): finite, distinct per element within a block
    const halfs = new Uint16Array(fp16 / 2).map((_, i) => 0x3800 + ((i * 37) % 1024));
    for (let k = 0; k < o.kernels; k++) b.write(src, k * fp16, halfs);
    const gemv = { w: alloc(o.gemvRows * o.gemvCols * 2), x: alloc(o.gemvCols * 4), y: alloc(o.gemvRows * 4), rows: o.gemvRows, cols: o.gemvCols };
    b.write(gemv.x, 0, new Float32Array(o.gemvCols).map((_, i) => Math.cos(i)));
    const gemvUs = Math.max(1, (await timeOp(b, 'compute', 3, 1, () => b.gemv('compute', gemv))) * 1000);
    const [e0, e1, cEnd] = [events.make(), events.make(), events.make()];
    const points: ConvertPoint[] = [];
    for (const bits of CONVERT_BITS) {
      const s = stride(bits);
      const meta = kMetaOffset(g, PRECISION_OF_BITS[bits]!);
      const quantize = (k: number) => b.quantize('memory', { src, srcOffset: k * fp16, codes, codesOffset: k * s, meta: codes, metaOffset: k * s + meta, n, bits, groupSize: g.groupSize });
      const dequantize = (k: number) => b.dequantize('memory', { codes, codesOffset: k * s, meta: codes, metaOffset: k * s + meta, dst: out, dstOffset: k * fp16, n, bits, groupSize: g.groupSize });
      for (let k = 0; k < o.kernels; k++) quantize(k); // codes for the dequantize trials
      await b.synchronize();
      for (const [op, run] of [['quantize', quantize], ['dequantize', dequantize]] as const) {
        for (const condition of ['idle', 'under compute'] as const) {
          const us: number[] = [];
          const cover: number[] = [];
          let perKernel = 10;
          for (let t = 0; t <= o.trials; t++) {
            // the compute stream's GEMVs slow down beside the kernels: 3x their expected time keeps it busy throughout
            const reps = condition === 'idle' ? 0 : Math.max(2, Math.ceil((3 * o.kernels * perKernel) / gemvUs));
            const enqueue = () => {
              if (o.gate) b.waitEvent('memory', o.gate.start);
              if (reps > 0) {
                b.gemv('compute', gemv, reps);
                b.record('compute', cEnd);
              }
              b.record('memory', e0);
              for (let k = 0; k < o.kernels; k++) run(k);
              b.record('memory', e1);
            };
            if (o.gate) await o.gate.trial(`convert ${op} ${bits} ${condition}`, enqueue);
            else {
              enqueue();
              await b.synchronize();
            }
            const ms = b.elapsedMs(e0, e1);
            perKernel = Math.max(0.5, (ms * 1000) / o.kernels);
            if (t === 0) continue; // warm-up: sizes the compute work
            us.push(perKernel);
            cover.push(reps > 0 ? b.elapsedMs(e0, cEnd) / ms : 0);
          }
          points.push({ op, bits, condition, kernels: o.kernels, us: median(us), compute_cover: Math.min(...cover) });
        }
      }
    }
    return points;
  } finally {
    try {
      await b.synchronize();
    } finally {
      events.destroyAll();
      for (const r of owned) b.free(r);
    }
  }
}
