// Builds KV block bytes on the CPU (with the reference quantizer, bit-exact with the
// kernels) and lays a sequence of blocks out in an arena with its block table.
import { type BlockEntry, type BlockGeometry, type Precision, PRECISION_BITS, blockBytes, kMetaOffset, vMetaOffset, vOffset } from './kv-format.js';
import { type Quantized, quantizeRef } from './reference/quantize.js';

/**
 * k and v: FP16 bits in [kvHead][token][dim] order, blockTokens rows per head. `quantize`: the
 * reference by default; the executor passes a faster one with the same bits.
 */
export function packBlock(g: BlockGeometry, p: Precision, k: Uint16Array, v: Uint16Array, quantize: (src: Uint16Array, bits: number, groupSize: number) => Quantized = quantizeRef): Uint8Array {
  const out = new Uint8Array(blockBytes(g, p));
  if (p === 'fp16') {
    out.set(new Uint8Array(k.buffer, k.byteOffset, k.byteLength), 0);
    out.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), vOffset(g, p));
    return out;
  }
  const bits = PRECISION_BITS[p];
  const qk = quantize(k, bits, g.groupSize);
  const qv = quantize(v, bits, g.groupSize);
  out.set(qk.codes, 0);
  out.set(qv.codes, vOffset(g, p));
  out.set(new Uint8Array(qk.meta.buffer), kMetaOffset(g, p));
  out.set(new Uint8Array(qv.meta.buffer), vMetaOffset(g, p));
  return out;
}

export interface PackedCache {
  arena: Uint8Array;
  table: BlockEntry[];
}

/**
 * Packs a whole sequence. kAll / vAll: FP16 bits [kvHead][token][dim] for `tokens` tokens;
 * precisions[i] is block i's precision. Blocks are placed in a shuffled order with gaps
 * (when `scatter`) so the kernels really follow the table.
 */
export function packCache(
  g: BlockGeometry,
  tokens: number,
  kAll: Uint16Array,
  vAll: Uint16Array,
  precisions: readonly Precision[],
  scatter = true,
): PackedCache {
  const blocks = Math.ceil(tokens / g.blockTokens);
  const sizes = precisions.slice(0, blocks).map((p) => blockBytes(g, p));
  const order = [...Array(blocks).keys()];
  if (scatter) order.reverse();
  const offsets = new Array<number>(blocks);
  let at = scatter ? 256 : 0;
  for (const b of order) {
    offsets[b] = at;
    at += sizes[b]! + (scatter ? 16 * ((b % 3) + 1) : 0);
  }
  const arena = new Uint8Array(at);
  const table: BlockEntry[] = [];
  const D = g.headDim;
  const T = g.blockTokens;
  for (let b = 0; b < blocks; b++) {
    const k = new Uint16Array(g.kvHeads * T * D);
    const v = new Uint16Array(g.kvHeads * T * D);
    for (let h = 0; h < g.kvHeads; h++) {
      for (let t = 0; t < T; t++) {
        const tok = b * T + t;
        if (tok >= tokens) {
          // rows past the context hold NaN: a kernel that reads them fails the checks
          k.fill(0x7e00, (h * T + t) * D, (h * T + t + 1) * D);
          v.fill(0x7e00, (h * T + t) * D, (h * T + t + 1) * D);
          continue;
        }
        const src = (h * tokens + tok) * D;
        k.set(kAll.subarray(src, src + D), (h * T + t) * D);
        v.set(vAll.subarray(src, src + D), (h * T + t) * D);
      }
    }
    arena.set(packBlock(g, precisions[b]!, k, v), offsets[b]!);
    table.push({ offset: offsets[b]!, precision: precisions[b]! });
  }
  return { arena, table };
}
