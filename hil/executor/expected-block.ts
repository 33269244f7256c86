/**
 * The bytes a block must hold at given bits: its FP16 content (rotated for RotateKV), through the
 * quantized widths it went through, packed at its width. What the executor writes before a run and
 * what verification expects after it.
 */
import { packBlock } from '../block-pack.js';
import { PRECISION_OF_BITS as PREC, blockBytes, sectionElems } from '../kv-format.js';
import { dequantizeRef } from '../reference/quantize.js';
import type { BlockData } from './block-data.js';
import type { LoweredPlan } from './lowered-plan.js';
import { quantizeFast } from './quantize-fast.js';
import { rotateHalves } from './rotate-ref.js';

/** what a block's expected bytes depend on besides its content: the layout and whether K/V are rotated */
export type PackSpec = Pick<LoweredPlan, 'geometry' | 'rotation'>;

/**
 * bytes of block (l, b) at `bits`, as the tiers must hold them; `via`: the quantized widths its values
 * went through first (each a quantization and a dequantization to FP16, as a conversion does)
 */
export function expectedBlock(p: PackSpec, data: BlockData, l: number, blk: number, bits: number, via: readonly number[] = []): Uint8Array {
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

