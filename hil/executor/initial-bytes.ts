/**
 * The bytes every block starts with: each initial block at its bits in its region (and, for NVMe,
 * in the file at the same offset), written in runs of adjacent blocks up to 32 MiB; and the FP16 KV
 * of the blocks created while decoding, in the fresh region. When the initial blocks are many, they are
 * packed ahead on worker threads.
 */
import type { NativeBackend, NativeFileTier } from '../addon-types.js';
import { PRECISION_OF_BITS as PREC, blockBytes } from '../kv-format.js';
import type { BlockData } from './block-data.js';
import type { LoweredPlan, RegionName } from './lowered-plan.js';
import { WRITE_CHUNK } from './model-buffers.js';
import { BlockPacker, packThreads } from './pack-pool.js';

/** FP16 values to pack below which the blocks are packed on the calling thread (a pool's start costs more) */
export const POOL_MIN_HALVES = 1 << 24;

/**
 * `threads`: worker threads packing the blocks (default: one per spare CPU when the initial blocks hold
 * at least POOL_MIN_HALVES values, else none). With a pool every initial block is packed there; without
 * one, the quantized or rotated blocks are packed on the calling thread and the FP16 ones filled in place.
 */
export async function writeInitial(b: NativeBackend, p: LoweredPlan, data: BlockData, regions: Map<RegionName, number>, file?: NativeFileTier, threads?: number): Promise<void> {
  const g = p.geometry;
  const fp16 = blockBytes(g, 'fp16');
  const t = threads ?? (p.initial.length * data.halves >= POOL_MIN_HALVES ? packThreads() : 0);
  const packed = t > 0 ? p.initial : p.initial.filter((x) => x.bits !== 16 || p.rotation);
  const items = new Int32Array(packed.length * 3);
  for (let i = 0; i < packed.length; i++) {
    items[3 * i] = packed[i].layer;
    items[3 * i + 1] = packed[i].block;
    items[3 * i + 2] = packed[i].bits;
  }
  const packer = await BlockPacker.open(p, data, items, t);
  try {
    await writeBlocks(b, p, data, regions, file, packer, fp16, t > 0);
  } finally {
    await packer.close();
  }
}

/** `allPacked`: every block comes from the packer (else the FP16 ones without rotation are filled here) */
async function writeBlocks(b: NativeBackend, p: LoweredPlan, data: BlockData, regions: Map<RegionName, number>, file: NativeFileTier | undefined, packer: BlockPacker, fp16: number, allPacked: boolean): Promise<void> {
  const g = p.geometry;
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
    if (x.bits === 16 && !p.rotation && !allPacked) {
      data.fill(x.layer, x.block, words);
      buf.set(new Uint8Array(words.buffer), at);
    } else {
      buf.set(await packer.next(), at);
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
