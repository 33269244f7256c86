/**
 * Byte layout constants of the `.kvt` attention trace file, version 1 (see traces/FORMAT.md).
 * Every field is a little-endian 32-bit word and every section starts on a 4-byte boundary, so a
 * reader can take Uint32Array / Float32Array views of a chunk buffer without copying.
 */
import { endianness } from 'node:os';
import type { TraceEncoding } from './format.js';

/** "KVTRACE\0" */
export const FILE_MAGIC: readonly number[] = [0x4b, 0x56, 0x54, 0x52, 0x41, 0x43, 0x45, 0x00];
/** magic (8) + version (4) + header JSON byte length (4) + header checksum (4) */
export const PREAMBLE_BYTES = 20;
/** the header JSON is at most this long (a sanity bound against corrupted length fields) */
export const MAX_HEADER_BYTES = 16 * 1024 * 1024;
/** "KVST" read as a little-endian u32: starts the record of one decode step */
export const STEP_MAGIC = 0x5453564b;
/** "KEND" read as a little-endian u32: the end record, which carries the step count */
export const END_MAGIC = 0x444e454b;
/** record magic, step (or step count), payload bytes, payload checksum */
export const RECORD_HEADER_BYTES = 16;
/** per layer: nBlocks, listed, remainder (f32), normFrom, nNorms */
export const LAYER_FIXED_WORDS = 5;

/** Words one layer takes in a step payload. */
export function layerWords(encoding: TraceEncoding, listed: number, nNorms: number): number {
  return LAYER_FIXED_WORDS + (encoding === 'topk' ? 2 * listed : listed) + nNorms;
}

/** Round a byte count up to a multiple of 4. */
export function pad4(bytes: number): number {
  return Math.ceil(bytes / 4) * 4;
}

/** Typed-array views give the file's byte order only on little-endian hosts (x86-64, arm64). */
export function assertLittleEndian(): void {
  if (endianness() !== 'LE') {
    throw new Error('kvtier traces: this host is big-endian; the .kvt reader and writer need a little-endian host');
  }
}
