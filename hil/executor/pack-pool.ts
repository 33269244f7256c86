/**
 * Blocks' expected bytes computed ahead on a piscina pool of worker threads, handed back one block at
 * a time in the order asked: the quantization of a long context's initial blocks is most of a run's
 * set-up on one thread (65,536 INT2 blocks of 32k halves at 32k context) and every block is
 * independent. With no threads it packs each block on the calling thread when asked.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Piscina } from 'piscina';
import type { BlockData } from './block-data.js';
import { expectedBlock, type PackSpec } from './expected-block.js';
import { packedSize, type PackTask } from './pack-blocks.js';

/** blocks per task: large enough that a task outweighs its hand-off, small enough to spread */
export const PACK_CHUNK = 64;

/**
 * worker threads for packing on this machine: one per CPU beyond the calling thread's, at most 16;
 * none where that is one (a single worker only moves the work off a thread that would wait for it)
 */
export function packThreads(): number {
  const spare = Math.min(16, os.availableParallelism() - 1);
  return spare >= 2 ? spare : 0;
}

function workerEntry(): { filename: string; name: string } {
  if (import.meta.url.endsWith('.ts')) return { filename: fileURLToPath(new URL('./ts-pack-entry.mjs', import.meta.url)), name: 'pack' };
  const filename = fileURLToPath(new URL('./pack-worker.js', import.meta.url));
  if (!fs.existsSync(filename)) throw new Error(`hil: block-packing worker ${filename} is missing; run "npm run build"`);
  return { filename, name: 'default' };
}

export class BlockPacker {
  /** chunks submitted and not yet consumed, in order */
  private readonly queue: Promise<ArrayBuffer>[] = [];
  private nextChunk = 0;
  private readonly chunks: number;
  private cur: Uint8Array | null = null;
  private at = 0;
  private taken = 0;

  /**
   * `items`: (layer, block, bits) of the blocks to pack, in the order `next` will be called;
   * `threads` 0: no pool, each block packed when asked (piscina is loaded only for a pool)
   */
  static async open(spec: PackSpec, data: BlockData, items: Int32Array, threads: number): Promise<BlockPacker> {
    const chunks = Math.ceil(items.length / 3 / PACK_CHUNK);
    if (threads <= 0 || chunks === 0) return new BlockPacker(spec, data, items, null);
    const { Piscina } = await import('piscina');
    const packer = new BlockPacker(spec, data, items, new Piscina({ ...workerEntry(), minThreads: threads, maxThreads: threads }));
    for (let k = 0; k < Math.min(chunks, threads * 3); k++) packer.submit();
    return packer;
  }

  private constructor(
    private readonly spec: PackSpec,
    private readonly data: BlockData,
    private readonly items: Int32Array,
    private readonly pool: Piscina | null,
  ) {
    this.chunks = Math.ceil(items.length / 3 / PACK_CHUNK);
  }

  private submit(): void {
    const k = this.nextChunk++;
    const task: PackTask = {
      geometry: this.spec.geometry,
      rotation: this.spec.rotation,
      seed: this.data.seed,
      halves: this.data.halves,
      items: this.items.slice(k * PACK_CHUNK * 3, Math.min(this.items.length, (k + 1) * PACK_CHUNK * 3)),
    };
    this.queue.push(this.pool!.run(task) as Promise<ArrayBuffer>);
  }

  /** the next block's bytes (valid until the next call) */
  async next(): Promise<Uint8Array> {
    const i = this.taken++;
    if (3 * i >= this.items.length) throw new Error(`hil: block packer asked for block ${i + 1} of ${this.items.length / 3}`);
    const l = this.items[3 * i]!;
    const b = this.items[3 * i + 1]!;
    const bits = this.items[3 * i + 2]!;
    if (!this.pool) return expectedBlock(this.spec, this.data, l, b, bits);
    if (i % PACK_CHUNK === 0) {
      this.cur = new Uint8Array(await this.queue.shift()!);
      this.at = 0;
      if (this.nextChunk < this.chunks) this.submit();
    }
    const size = packedSize(this.spec.geometry, bits);
    const out = this.cur!.subarray(this.at, this.at + size);
    this.at += size;
    return out;
  }

  async close(): Promise<void> {
    // a pool closed early (an error while writing) still settles its tasks
    await Promise.allSettled(this.queue);
    await this.pool?.destroy();
  }
}
