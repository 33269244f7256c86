// Blocks packed ahead on worker threads are the bytes the calling thread packs, in the order asked,
// for every width, with and without RotateKV, across chunk boundaries; writeInitial writes the same
// bytes to the same places with a pool as without.
import { describe, expect, it } from 'vitest';
import { BlockData } from '../../hil/executor/block-data.js';
import { expectedBlock } from '../../hil/executor/expected-block.js';
import { writeInitial } from '../../hil/executor/initial-bytes.js';
import type { LoweredPlan } from '../../hil/executor/lowered-plan.js';
import { BlockPacker, PACK_CHUNK } from '../../hil/executor/pack-pool.js';
import { blockBytes } from '../../hil/kv-format.js';
import type { NativeBackend } from '../../hil/addon-types.js';

const g = { kvHeads: 2, blockTokens: 16, headDim: 64, groupSize: 64 };
const WIDTHS = [16, 8, 4, 3, 2];

function items(n: number, seed: number): Int32Array {
  const out = new Int32Array(3 * n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out.set([s % 5, (s >>> 8) % 97, WIDTHS[(s >>> 16) % WIDTHS.length]!], 3 * i);
  }
  return out;
}

describe('block packer', () => {
  it('hands back each block\'s expected bytes in order, on two worker threads as on the calling thread', async () => {
    const data = new BlockData(11, blockBytes(g, 'fp16') / 2);
    const n = 2 * PACK_CHUNK + 17; // a partial last chunk
    const list = items(n, 5);
    for (const rotation of [false, true]) {
      const spec = { geometry: g, rotation } as unknown as LoweredPlan;
      const pooled = await BlockPacker.open(spec, data, list, 2);
      const inline = await BlockPacker.open(spec, data, list, 0);
      try {
        for (let i = 0; i < n; i++) {
          const want = expectedBlock(spec, data, list[3 * i]!, list[3 * i + 1]!, list[3 * i + 2]!);
          expect(Buffer.from(await pooled.next()).equals(Buffer.from(want)), `block ${i}, rotation ${rotation}`).toBe(true);
          expect(Buffer.from(await inline.next()).equals(Buffer.from(want))).toBe(true);
        }
        await expect(pooled.next()).rejects.toThrow(/asked for block 146 of 145/);
      } finally {
        await pooled.close();
        await inline.close();
      }
    }
  }, 60_000);

  it('writeInitial writes the same bytes at the same places with a pool as without', async () => {
    const fp16 = blockBytes(g, 'fp16');
    const slot = fp16;
    const list = items(150, 9);
    // initial blocks one after another in the DRAM region, one slot each
    const initial = Array.from({ length: 150 }, (_, i) => ({ layer: list[3 * i]!, block: list[3 * i + 1]!, bits: list[3 * i + 2]!, region: 'dram', offset: i * slot, file: false }));
    const p = { geometry: g, rotation: false, slotBytes: slot, initial } as unknown as LoweredPlan;
    const data = new BlockData(3, fp16 / 2);
    const written = async (threads: number) => {
      const mem = new Uint8Array(150 * slot);
      const b = { write: (_r: number, off: number, bytes: Uint8Array) => mem.set(bytes, off) } as unknown as NativeBackend;
      await writeInitial(b, p, data, new Map([['dram', 0]]) as never, undefined, threads);
      return mem;
    };
    const a = await written(0);
    const c = await written(2);
    expect(Buffer.from(c).equals(Buffer.from(a))).toBe(true);
    // each block where the plan puts it, as verification expects it
    for (const i of [0, 77, 149]) {
      const x = initial[i]!;
      const want = expectedBlock(p, data, x.layer, x.block, x.bits);
      expect(Buffer.from(a.subarray(x.offset, x.offset + want.length)).equals(Buffer.from(want))).toBe(true);
    }
  }, 60_000);
});
