/**
 * A block converted between widths on the host, as a move between host tiers that changes its bits
 * does it (e.g. DRAM INT4 -> NVMe INT2): read from its host slot, dequantized to FP16 and quantized
 * again with the reference quantizer (bit-exact with the kernels: hil/reference/quantize.ts), written
 * to the destination slot. No byte crosses the host link.
 */
import { packBlock } from '../block-pack.js';
import { type BlockGeometry, PRECISION_OF_BITS, blockBytes, kMetaOffset, sectionElems, vMetaOffset, vOffset } from '../kv-format.js';
import { dequantizeRef } from '../reference/quantize.js';

/** the FP16 K and V values of a block stored at `bits` */
export function blockValues(g: BlockGeometry, bits: number, bytes: Uint8Array): { k: Uint16Array; v: Uint16Array } {
  const n = sectionElems(g);
  const p = PRECISION_OF_BITS[bits]!;
  if (bits === 16) {
    const all = new Uint16Array(bytes.slice(0, blockBytes(g, 'fp16')).buffer);
    return { k: all.slice(0, n), v: all.slice(vOffset(g, p) / 2, vOffset(g, p) / 2 + n) };
  }
  const codes = (at: number) => bytes.slice(at, at + (n * bits) / 8);
  const meta = (at: number) => new Uint16Array(bytes.slice(at, at + (n / g.groupSize) * 4).buffer);
  return {
    k: dequantizeRef({ codes: codes(0), meta: meta(kMetaOffset(g, p)) }, n, bits, g.groupSize),
    v: dequantizeRef({ codes: codes(vOffset(g, p)), meta: meta(vMetaOffset(g, p)) }, n, bits, g.groupSize),
  };
}

/** a block's bytes at `fromBits` converted to `toBits` */
export function convertBlock(g: BlockGeometry, fromBits: number, toBits: number, bytes: Uint8Array): Uint8Array {
  const { k, v } = blockValues(g, fromBits, bytes);
  return packBlock(g, PRECISION_OF_BITS[toBits]!, k, v);
}
