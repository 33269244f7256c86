// The paged mixed-precision KV block layout, mirrored from hil/native/common/kv-format.h.
// Element order in a K or V section: [kvHead][token][dim]; INT blocks hold
// [K codes][V codes][K meta][V meta], sections padded to 16 bytes; meta = (scale, zero) FP16.
// Codes are one little-endian bit stream per section: element i at bits [i*b, i*b + b); INT3 packs
// every 8 elements into 3 bytes (a code may straddle two bytes).

export type Precision = 'fp16' | 'int8' | 'int4' | 'int2' | 'int3';
/** Codes 0..3 in code order, then int3 (code 4, added after the others). */
export const PRECISIONS: readonly Precision[] = ['fp16', 'int8', 'int4', 'int2', 'int3'];
export const PRECISION_CODE: Record<Precision, number> = { fp16: 0, int8: 1, int4: 2, int2: 3, int3: 4 };
export const PRECISION_BITS: Record<Precision, number> = { fp16: 16, int8: 8, int4: 4, int3: 3, int2: 2 };
/** The block precision of a cache width in bits (16, 8, 4, 3, 2). */
export const PRECISION_OF_BITS: Readonly<Record<number, Precision>> = { 16: 'fp16', 8: 'int8', 4: 'int4', 3: 'int3', 2: 'int2' };

export interface BlockGeometry {
  kvHeads: number;
  blockTokens: number;
  headDim: number;
  groupSize: number;
}

export const align16 = (n: number): number => Math.ceil(n / 16) * 16;
export const sectionElems = (g: BlockGeometry): number => g.kvHeads * g.blockTokens * g.headDim;
export const codesBytes = (g: BlockGeometry, p: Precision): number => (sectionElems(g) * PRECISION_BITS[p]) / 8;
export const metaBytes = (g: BlockGeometry): number => (sectionElems(g) / g.groupSize) * 4;
export const vOffset = (g: BlockGeometry, p: Precision): number => align16(codesBytes(g, p));
export const kMetaOffset = (g: BlockGeometry, p: Precision): number => 2 * align16(codesBytes(g, p));
export const vMetaOffset = (g: BlockGeometry, p: Precision): number => kMetaOffset(g, p) + align16(metaBytes(g));
export const blockBytes = (g: BlockGeometry, p: Precision): number =>
  p === 'fp16' ? 2 * align16(codesBytes(g, p)) : vMetaOffset(g, p) + align16(metaBytes(g));

/** Average stored bits per K/V element of a block, scales and zeros included. */
export const bitsPerElement = (g: BlockGeometry, p: Precision): number => (blockBytes(g, p) * 8) / (2 * sectionElems(g));

export interface BlockEntry {
  offset: number;
  precision: Precision;
}

/** Encodes a block table: 16 bytes per entry (u64 offset, i32 precision, i32 reserved). */
export function encodeBlockTable(entries: readonly BlockEntry[]): Uint8Array {
  const buf = new ArrayBuffer(entries.length * 16);
  const view = new DataView(buf);
  entries.forEach((e, i) => {
    view.setBigUint64(i * 16, BigInt(e.offset), true);
    view.setInt32(i * 16 + 8, PRECISION_CODE[e.precision], true);
  });
  return new Uint8Array(buf);
}
