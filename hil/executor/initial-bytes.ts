/**
 * The bytes every block starts with: each initial block at its bits in its region (and, for NVMe,
 * in the file at the same offset), written in runs of adjacent blocks up to 32 MiB; and the FP16 KV
 * of the blocks created while decoding, in the fresh region. Also the bytes a block must hold at
 * given bits (its quantization from the FP16 content), for writing and for verifying.
 */
import type { NativeBackend, NativeFileTier } from '../addon-types.js';
import { packBlock } from '../block-pack.js';
import { dequantizeRef } from '../reference/quantize.js';
import { quantizeFast } from './quantize-fast.js';
import { type Precision, blockBytes, sectionElems } from '../kv-format.js';
import type { BlockData } from './block-data.js';
import { rotateHalves } from './rotate-ref.js';
import type { LoweredPlan, RegionName } from './lowered-plan.js';
import { WRITE_CHUNK } from './model-buffers.js';

const PREC: Record<number, Precision> = { 16: 'fp16', 8: 'int8', 4: 'int4', 3: 'int3', 2: 'int2' };

/**
 * bytes of block (l, b) at `bits`, as the tiers must hold them; `via`: the quantized widths its values
 * went through first (each a quantization and a dequantization to FP16, as a conversion does)
 */
export function expectedBlock(p: LoweredPlan, data: BlockData, l: number, blk: number, bits: number, via: readonly number[] = []): Uint8Array {
  const g = p.geometry;
  let v = data.block(l, blk);
  if (p.rotation) v = rotateHalves(v, g.headDim);
  const half = sectionElems(g);
  for (const w of via) {
    const k = v.subarray(0, half);
    const vv = v.subarray(half);
    const out = new Uint16Array(v.length);
    out.set(dequantizeRef(quantizeFast(k, w, g.groupSize), half, w, g.groupSize), 0);
    out.set(dequantizeRef(quantizeFast(vv, w, g.groupSize), half, w, g.groupSize), half);
    v = out;
  }
  if (bits === 16) return new Uint8Array(v.buffer, 0, blockBytes(g, 'fp16'));
  return packBlock(g, PREC[bits]!, v.subarray(0, half), v.subarray(half), quantizeFast);
}

export async function writeInitial(b: NativeBackend, p: LoweredPlan, data: BlockData, regions: Map<RegionName, number>, file?: NativeFileTier): Promise<void> {
  const g = p.geometry;
  const fp16 = blockBytes(g, 'fp16');
  let buf = new Uint8Array(WRITE_CHUNK + p.slotBytes);
  let run: { region: RegionName; start: number; end: number; file: boolean } | null = null;
  const flush = async () => {
    if (!run) return;
    b.write(regions.get(run.region)!, run.start, buf.subarray(0, run.end - run.start));
    if (run.file) await file!.write(regions.get(run.region)!, run.start, run.start, Math.ceil((run.end - run.start) / 4096) * 4096);
    run = null;
  };
  const words = new Uint32Array(fp16 / 4);
  for (const x of p.initial) {
    const size = x.bits === 16 ? fp16 : blockBytes(g, PREC[x.bits]!);
    const span = x.region === 'arena' ? size : p.slotBytes;
    if (!run || run.region !== x.region || run.file !== x.file || run.end !== x.offset || run.end - run.start + span > WRITE_CHUNK) {
      await flush();
      run = { region: x.region, start: x.offset, end: x.offset, file: x.file };
    }
    const at = x.offset - run!.start;
    if (x.bits === 16 && !p.rotation) {
      data.fill(x.layer, x.block, words);
      buf.set(new Uint8Array(words.buffer), at);
    } else {
      buf.set(expectedBlock(p, data, x.layer, x.block, x.bits), at);
    }
    run!.end = x.offset + span;
  }
  await flush();
  buf = new Uint8Array(0);
}

/** the FP16 KV of blocks created while decoding, in fresh-region order */
export function writeFresh(b: NativeBackend, p: LoweredPlan, data: BlockData, fresh: number): void {
  const fp16 = blockBytes(p.geometry, 'fp16');
  const freshBuf = new Uint32Array(Math.min(p.fresh.length, Math.max(1, Math.floor(WRITE_CHUNK / fp16))) * (fp16 / 4));
  for (let i = 0; i < p.fresh.length; ) {
    const n = Math.min(p.fresh.length - i, freshBuf.length / (fp16 / 4));
    for (let k = 0; k < n; k++) data.fill(p.fresh[i + k].layer, p.fresh[i + k].block, freshBuf, (k * fp16) / 4);
    b.write(fresh, i * fp16, new Uint8Array(freshBuf.buffer, 0, n * fp16));
    i += n;
  }
}
