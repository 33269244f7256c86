/**
 * Test helper: change one value of one row of a valid .kvt file and recompute that record's
 * checksum (traces/checksum.ts), so the file stays structurally valid and only the value is bad.
 */
import { wordChecksum } from '../../traces/checksum.js';

export type RowField = 'remainder' | 'idx' | 'mass' | 'norms';

export interface RowPlace {
  /** byte offset of the step's record (what error messages name) */
  recordAt: number;
  /** byte offset of the row's first word */
  rowAt: number;
  nBlocks: number;
  listed: number;
  normFrom: number;
  nNorms: number;
  topk: boolean;
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Where step `step`, row `row` (= layer * kv_groups + group) lies in the file. */
export function locateRow(bytes: Uint8Array, step: number, row: number): RowPlace {
  const dv = view(bytes);
  const headerBytes = dv.getUint32(12, true);
  const topk = JSON.parse(Buffer.from(bytes.subarray(20, 20 + headerBytes)).toString('utf8')).encoding === 'topk';
  let at = 20 + headerBytes;
  for (let s = 0; s < step; s++) at += 16 + dv.getUint32(at + 8, true);
  let w = at + 16;
  for (let r = 0; r < row; r++) {
    const listed = dv.getUint32(w + 4, true);
    w += 4 * (5 + (topk ? 2 * listed : listed) + dv.getUint32(w + 16, true));
  }
  return {
    recordAt: at,
    rowAt: w,
    nBlocks: dv.getUint32(w, true),
    listed: dv.getUint32(w + 4, true),
    normFrom: dv.getUint32(w + 12, true),
    nNorms: dv.getUint32(w + 16, true),
    topk,
  };
}

/**
 * A copy of `bytes` with `field` (index `i` for the arrays) of (step, row) set to `value` (an f32
 * for remainder/mass/norms, a u32 for idx), and the record's checksum recomputed.
 */
export function patchRow(bytes: Uint8Array, step: number, row: number, field: RowField, value: number, i = 0): { bytes: Uint8Array; place: RowPlace } {
  const out = bytes.slice();
  const dv = view(out);
  const place = locateRow(out, step, row);
  const topk = place.topk;
  const idxWords = topk ? place.listed : 0;
  const word =
    field === 'remainder' ? 2 : field === 'idx' ? 5 + i : field === 'mass' ? 5 + idxWords + i : 5 + idxWords + place.listed + i;
  const limit = field === 'remainder' ? 1 : field === 'norms' ? place.nNorms : place.listed;
  if (field !== 'remainder' && i >= limit) throw new Error(`patchRow: ${field}[${i}] is past the row's ${limit} entries`);
  if (field === 'idx' && !topk) throw new Error('patchRow: a dense trace has no idx');
  if (field === 'idx') dv.setUint32(place.rowAt + 4 * word, value, true);
  else dv.setFloat32(place.rowAt + 4 * word, value, true);
  const payloadBytes = dv.getUint32(place.recordAt + 8, true);
  const words = new Int32Array(out.buffer.slice(out.byteOffset + place.recordAt + 16, out.byteOffset + place.recordAt + 16 + payloadBytes));
  dv.setUint32(place.recordAt + 12, wordChecksum(words, 0, payloadBytes / 4), true);
  return { bytes: out, place };
}

