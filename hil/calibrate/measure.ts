/**
 * The calibration microbenchmarks: pinned copies vs size per direction (and pageable, recorded),
 * both directions at once, a copy under attention (overlap), attention vs context and precision,
 * GEMV at the model's shapes, and file-tier reads and writes vs request size.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { NativeBackend } from '../addon-types.js';
import { benchAttention } from '../bench/attention-bench.js';
import { benchBidirectional, benchCopies, benchDeviceCopy } from '../bench/copy-bench.js';
import { benchGemv } from '../bench/gemv-bench.js';
import { benchOverlap } from '../bench/overlap-bench.js';
import { median } from '../bench/timing.js';
import { loadHil } from '../load-addon.js';
import type { Precision } from '../kv-format.js';
import type { ModelSpec } from '../../sim/models/model.js';
import type { Point } from './fit-linear.js';

export interface Measurements {
  h2d: Point[];
  d2h: Point[];
  pageable: { direction: string; bytes: number; us: number }[];
  d2d_GBps: number;
  bidirectional_GBps: number;
  overlap: { maskingEfficiency: number; computeMs: number; bothMs: number } | null;
  kernels: (Point & { kind: 'attention' | 'gemv'; precision?: string; context?: number })[];
  file_read: Point[];
  file_write: Point[];
  file_direct: boolean | null;
}

export interface MeasureOptions {
  model: ModelSpec;
  blockTokens: number;
  groupSize: number;
  quick: boolean;
  fileDir: string;
}

export async function measureAll(b: NativeBackend, o: MeasureOptions, log: (s: string) => void): Promise<Measurements> {
  const cuda = b.kind === 'cuda';
  const sizes = (o.quick ? [64, 256, 1024, 4096] : [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 65536]).map((k) => k * 1024);
  log(`copies: ${sizes.length} sizes, pinned${cuda ? ' and pageable' : ''}`);
  const rows = await benchCopies(b, { sizes, hostKinds: cuda && !o.quick ? ['pinned', 'pageable'] : ['pinned'], trials: o.quick ? 3 : 7, bytesPerTrial: o.quick ? 8 << 20 : 256 << 20 });
  const pin = (d: 'h2d' | 'd2h') => rows.filter((r) => r.direction === d && r.hostKind === 'pinned').map((r) => ({ bytes: r.bytes, us: r.usPerCopy, label: `${r.bytes} B` }));
  const pageable = rows.filter((r) => r.hostKind === 'pageable').map((r) => ({ direction: r.direction, bytes: r.bytes, us: r.usPerCopy }));
  const d2d = await benchDeviceCopy(b, o.quick ? 16 << 20 : 256 << 20, o.quick ? 3 : 7);
  const bidir = await benchBidirectional(b, o.quick ? 1 << 20 : 8 << 20, o.quick ? 4 : 32, o.quick ? 2 : 5);
  const overlap = cuda ? await benchOverlap(b, { contextTokens: 32768, attnRepeat: 20, slabBytes: 2 << 20, slabs: 16 }) : null;
  log('kernels: attention vs context and precision, GEMV at the model shapes');
  const m = o.model;
  const contexts = o.quick ? [256, 1024] : [1024, 2048, 4096, 8192, 16384, 32768];
  const kernels: Measurements['kernels'] = [];
  const precs: Precision[] = o.quick ? ['fp16'] : ['fp16', 'int8', 'int4'];
  for (const precision of precs) {
    for (const ctx of precision === 'fp16' ? contexts : contexts.filter((c) => c >= 4096)) {
      const r = await benchAttention(b, { label: precision, contextTokens: ctx, qHeads: m.q_heads, kvHeads: m.kv_heads, headDim: m.head_dim, blockTokens: o.blockTokens, groupSize: o.groupSize, precisionOf: () => precision }, o.quick ? 3 : 10);
      kernels.push({ kind: 'attention', precision, context: ctx, bytes: r.kvBytes, us: r.us, label: `attention ${precision} ${ctx}` });
    }
  }
  const rowsW = Math.max(8, Math.round(m.weight_bytes_per_layer / 2 / m.hidden));
  const shapes: [string, number, number][] = [[`layer ${rowsW}x${m.hidden}`, rowsW, m.hidden]];
  if (m.other_weight_bytes > 0) shapes.push([`lm-head`, Math.max(8, Math.round(m.other_weight_bytes / 4 / m.hidden)), m.hidden]);
  if (!o.quick) shapes.push(['4096x4096', 4096, 4096], ['14336x4096', 14336, 4096]);
  for (const [label, rows, cols] of shapes) {
    const r = await benchGemv(b, label, rows, cols, o.quick ? 3 : 10);
    kernels.push({ kind: 'gemv', bytes: rows * cols * 2, us: r.us, label: `gemv ${label}` });
  }
  log('file tier: reads and writes vs request size');
  const file = await measureFile(b, o.fileDir, (o.quick ? [64, 256, 1024] : [64, 256, 1024, 4096, 16384, 65536]).map((k) => k * 1024), o.quick ? 2 : 5);
  return { h2d: pin('h2d'), d2h: pin('d2h'), pageable, d2d_GBps: d2d.GBps, bidirectional_GBps: bidir.totalGBps, overlap: overlap ? { maskingEfficiency: overlap.maskingEfficiency, computeMs: overlap.computeMs, bothMs: overlap.bothMs } : null, kernels, ...file };
}

/** one request of each size through the file tier (as the HIL executor issues them), median of trials */
async function measureFile(b: NativeBackend, dir: string, sizes: number[], trials: number) {
  const loaded = loadHil();
  if (!loaded.ok) throw new Error(loaded.reasons.join('; '));
  const max = Math.max(...sizes);
  const path = join(dir, `kvtier-calibrate-${process.pid}.bin`);
  const tier = new loaded.addon.FileTier(b, { path, bytes: max * 4, threads: 4, removeOnClose: true });
  const buf = b.alloc('pinned', max);
  b.write(buf, 0, new Uint8Array(max).map((_, i) => (i * 2654435761) >>> 24));
  const read: Point[] = [];
  const write: Point[] = [];
  try {
    for (let k = 0; k < 4; k++) await tier.write(buf, 0, k * max, max, { sync: true });
    for (const n of sizes) {
      const w: number[] = [];
      const r: number[] = [];
      for (let t = 0; t < trials; t++) {
        // rotate file offsets so reads do not hit a drive-side cache of the block just written
        const off = ((t % 3) + 1) * max;
        w.push((await tier.write(buf, 0, off, n)).ms);
        r.push((await tier.read(buf, 0, ((t + 1) % 3 + 1) * max, n)).ms);
      }
      write.push({ bytes: n, us: median(w) * 1000, label: `${n} B` });
      read.push({ bytes: n, us: median(r) * 1000, label: `${n} B` });
    }
    return { file_read: read, file_write: write, file_direct: tier.direct };
  } finally {
    tier.close();
    b.free(buf);
    rmSync(path, { force: true });
  }
}
