/**
 * The streaming reader's structural checks, each with its exact message: a record whose nBlocks,
 * listed count, normFrom/nNorms, payload size or trailing bytes are wrong, header length checks,
 * the checksum message and the end record's fields. Bad files are made from a small generated
 * trace by changing exact words of one record and recomputing that record's checksum. Also: a
 * multi-step trace read with tiny buffers (records larger than the buffer, reads straddling its
 * end, rewinds) gives exactly the steps of a read with the default buffer.
 */
import * as fs from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_HEADER_BYTES } from '../../traces/binary-layout.js';
import { wordChecksum } from '../../traces/checksum.js';
import { cloneStep } from '../../traces/clone-step.js';
import type { TraceStep } from '../../traces/format.js';
import { openTrace, readTraceHeader, type TraceReaderOptions } from '../../traces/trace-reader.js';
import { locateRow } from './patch-kvt.js';
import { smallTrace, tmpDir } from './raw-kvt.js';

const dir = tmpDir();

const TOPK = smallTrace(dir, 'good-topk.kvt', 'topk');
const DENSE = smallTrace(dir, 'good-dense.kvt', 'dense');

let n = 0;
function write(bytes: Uint8Array): string {
  const file = path.join(dir, `bad-${n++}.kvt`);
  fs.writeFileSync(file, bytes);
  return file;
}

function dv(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Recompute the checksum of the record at `recordAt` from its payload size word and payload. */
function reseal(bytes: Uint8Array, recordAt: number): void {
  const v = dv(bytes);
  const payloadBytes = v.getUint32(recordAt + 8, true);
  const words = new Int32Array(bytes.buffer.slice(bytes.byteOffset + recordAt + 16, bytes.byteOffset + recordAt + 16 + payloadBytes));
  v.setUint32(recordAt + 12, wordChecksum(words, 0, payloadBytes / 4), true);
}

/** A copy of `bytes` with u32 words set at the given byte offsets, the record at `recordAt` resealed. */
function patchWords(bytes: Uint8Array, recordAt: number, words: Array<[number, number]>): Uint8Array {
  const out = bytes.slice();
  for (const [at, value] of words) dv(out).setUint32(at, value, true);
  reseal(out, recordAt);
  return out;
}

/**
 * A copy of `bytes` with `remove` bytes at `at` replaced by `insert`, inside the record at
 * `recordAt`, its payload size adjusted and the record resealed.
 */
function splice(bytes: Uint8Array, recordAt: number, at: number, remove: number, insert: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length - remove + insert.length);
  out.set(bytes.subarray(0, at), 0);
  out.set(insert, at);
  out.set(bytes.subarray(at + remove), at + insert.length);
  const v = dv(out);
  v.setUint32(recordAt + 8, v.getUint32(recordAt + 8, true) - remove + insert.length, true);
  reseal(out, recordAt);
  return out;
}

function readAll(file: string, options?: TraceReaderOptions): TraceStep[] {
  const r = openTrace(file, options);
  try {
    // clone each step before the next is read: its arrays are views into the reader's buffer
    const steps: TraceStep[] = [];
    for (const s of r) steps.push(cloneStep(s));
    return steps;
  } finally {
    r.close();
  }
}

/** The message `f` throws (the test fails if it does not throw). */
function thrown(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected an error, none was thrown');
}

/** The reader's message for `bytes`, the same with the default buffer and with 64- and 100-byte buffers. */
function readerError(bytes: Uint8Array): { file: string; message: string } {
  const file = write(bytes);
  const message = thrown(() => readAll(file));
  for (const chunkBytes of [64, 100]) expect(thrown(() => readAll(file, { chunkBytes }))).toBe(message);
  return { file, message };
}

describe('layer structure checks', () => {
  it('names the row, its byte and both counts when nBlocks differs from the header', () => {
    const p = locateRow(TOPK.bytes, 2, 1);
    expect([p.recordAt, p.rowAt, p.nBlocks]).toEqual([1796, 1884, 16]);
    const { file, message } = readerError(patchWords(TOPK.bytes, p.recordAt, [[p.rowAt, 17]]));
    expect(message).toBe(`${file}: record for step 2 at byte 1796: layer 0 group 1 at byte 1884: nBlocks 17, expected 16 from the header (file corrupted)`);
  });

  it('names the block range when normFrom + nNorms exceeds nBlocks', () => {
    const p = locateRow(TOPK.bytes, 3, 2);
    expect([p.recordAt, p.rowAt, p.normFrom, p.nNorms]).toEqual([2100, 2260, 15, 1]);
    // 15 + 2 = 17 > 16 (valid rows have normFrom + nNorms === nBlocks exactly)
    const { file, message } = readerError(patchWords(TOPK.bytes, p.recordAt, [[p.rowAt + 16, 2]]));
    expect(message).toBe(`${file}: record for step 3 at byte 2100: layer 1 group 0 at byte 2260: norms for blocks 15..16 exceed nBlocks 16 (file corrupted)`);
  });

  it('refuses more listed blocks than top-k in a topk trace, naming the limit', () => {
    const p = locateRow(TOPK.bytes, 1, 3);
    expect([p.recordAt, p.rowAt, p.listed, p.nBlocks]).toEqual([1492, 1724, 6, 16]);
    const { file, message } = readerError(patchWords(TOPK.bytes, p.recordAt, [[p.rowAt + 4, 7]]));
    expect(message).toBe(`${file}: record for step 1 at byte 1492: layer 1 group 1 at byte 1724: 7 listed blocks, expected at most 6 (file corrupted)`);
  });

  it('refuses a dense row whose listed count is not nBlocks', () => {
    const p = locateRow(DENSE.bytes, 1, 2);
    expect([p.recordAt, p.rowAt, p.listed]).toEqual([1548, 1740, 16]);
    const { file, message } = readerError(patchWords(DENSE.bytes, p.recordAt, [[p.rowAt + 4, 15]]));
    expect(message).toBe(`${file}: record for step 1 at byte 1548: layer 1 group 0 at byte 1740: 15 listed blocks, expected 16 (file corrupted)`);
  });

  it("refuses a row whose arrays run past the record's payload", () => {
    // last row of step 2: norms for blocks 14..15 (2 words) where the payload holds 1
    const p = locateRow(TOPK.bytes, 2, 3);
    expect([p.rowAt, p.normFrom, p.nNorms]).toEqual([2028, 15, 1]);
    const { file, message } = readerError(patchWords(TOPK.bytes, p.recordAt, [[p.rowAt + 12, 14], [p.rowAt + 16, 2]]));
    expect(message).toBe(`${file}: record for step 2 at byte 1796: layer 1 group 1: its arrays run past the payload end (file corrupted)`);
  });

  it('refuses a payload that ends inside the fixed words of a row', () => {
    // step 4 keeps only the first 16 of the last row's 20 fixed bytes
    const p = locateRow(TOPK.bytes, 4, 3);
    const recordEnd = p.recordAt + 16 + dv(TOPK.bytes).getUint32(p.recordAt + 8, true);
    const { file, message } = readerError(splice(TOPK.bytes, p.recordAt, p.rowAt + 16, recordEnd - p.rowAt - 16, new Uint8Array(0)));
    expect(message).toBe(`${file}: record for step 4 at byte 2404: layer 1 group 1: payload ends inside the layer (file corrupted)`);
  });

  it('counts the payload bytes left after the last row', () => {
    const p = locateRow(DENSE.bytes, 5, 3);
    const recordEnd = p.recordAt + 16 + dv(DENSE.bytes).getUint32(p.recordAt + 8, true);
    const { file, message } = readerError(splice(DENSE.bytes, p.recordAt, recordEnd, 0, new Uint8Array(12)));
    expect(message).toBe(`${file}: record for step 5 at byte 3036: 12 bytes of payload after the last layer (file corrupted)`);
  });
});

describe('rows at the payload end', () => {
  it('reads a last row that is only its fixed words (no listed blocks, no norms, remainder 1)', () => {
    // the last row of step 2 becomes [nBlocks 16, listed 0, remainder 1, normFrom 16, nNorms 0]:
    // its five words end exactly at the payload end
    const p = locateRow(TOPK.bytes, 2, 3);
    const recordEnd = p.recordAt + 16 + dv(TOPK.bytes).getUint32(p.recordAt + 8, true);
    const row = new Uint8Array(20);
    const rv = dv(row);
    rv.setUint32(0, 16, true);
    rv.setUint32(4, 0, true);
    rv.setFloat32(8, 1, true);
    rv.setUint32(12, 16, true);
    rv.setUint32(16, 0, true);
    const file = write(splice(TOPK.bytes, p.recordAt, p.rowAt, recordEnd - p.rowAt, row));
    const reference = readAll(TOPK.file);
    for (const chunkBytes of [undefined, 64, 100]) {
      const steps = readAll(file, { chunkBytes });
      expect(steps.length).toBe(6);
      expect(steps[2]!.layers[3]).toEqual({ nBlocks: 16, idx: new Uint32Array(0), mass: new Float32Array(0), remainder: 1, normFrom: 16, norms: new Float32Array(0) });
      expect(steps[2]!.layers.slice(0, 3)).toEqual(reference[2]!.layers.slice(0, 3));
      expect(steps.filter((_, s) => s !== 2)).toEqual(reference.filter((_, s) => s !== 2));
    }
  });
});

describe('record header checks', () => {
  // step 2 of the topk trace: 16 blocks, at most 6 listed: 4 rows x (5 + 2*6 + 16) words
  const maxBytes = 4 * 4 * (5 + 12 + 16);

  it('refuses a payload size that is not a multiple of 4', () => {
    const p = locateRow(TOPK.bytes, 2, 0);
    const size = dv(TOPK.bytes).getUint32(p.recordAt + 8, true);
    const bad = TOPK.bytes.slice();
    dv(bad).setUint32(p.recordAt + 8, size + 2, true);
    const { file, message } = readerError(bad);
    expect(message).toBe(`${file}: record for step 2 at byte 1796: payload size ${size + 2} bytes: expected a multiple of 4 up to ${maxBytes} (file corrupted)`);
  });

  it('refuses a payload size above the largest the header allows', () => {
    const bad = TOPK.bytes.slice();
    dv(bad).setUint32(1796 + 8, maxBytes + 4, true);
    const { file, message } = readerError(bad);
    expect(message).toBe(`${file}: record for step 2 at byte 1796: payload size ${maxBytes + 4} bytes: expected a multiple of 4 up to ${maxBytes} (file corrupted)`);
    // the largest allowed size passes this check and fails later, on the record's own contents
    dv(bad).setUint32(1796 + 8, maxBytes, true);
    expect(readerError(bad).message).not.toContain('payload size');
  });

  it('gives the stored and the computed checksum in hex', () => {
    const bad = TOPK.bytes.slice();
    const at = 1796;
    const size = dv(bad).getUint32(at + 8, true);
    dv(bad).setUint32(at + 12, 0x2a, true);
    const computed = wordChecksum(new Int32Array(bad.buffer.slice(at + 16, at + 16 + size)), 0, size / 4);
    const { file, message } = readerError(bad);
    expect(message).toBe(
      `${file}: record for step 2 at byte 1796: checksum mismatch: stored 0x0000002a, computed 0x${computed.toString(16).padStart(8, '0')} (file corrupted)`,
    );
    // with verification off the file reads, and its steps equal the good file's
    expect(readAll(write(bad), { verifyChecksums: false })).toEqual(readAll(TOPK.file));
  });

  it('refuses more step records than the header declares', () => {
    // the header says 5 steps (same JSON length, checksum recomputed); 6 step records follow
    const bytes = TOPK.bytes.slice();
    const len = dv(bytes).getUint32(12, true);
    const json = Buffer.from(bytes.subarray(20, 20 + len)).toString('utf8');
    expect(json).toContain('"steps":6');
    bytes.set(Buffer.from(json.replace('"steps":6', '"steps":5'), 'utf8'), 20);
    dv(bytes).setUint32(16, wordChecksum(new Int32Array(bytes.buffer.slice(20, 20 + len)), 0, len / 4), true);
    const { file, message } = readerError(bytes);
    expect(message).toBe(`${file}: record for step 5 at byte 2708: the header declares 5 steps, the file has more (file corrupted)`);
  });

  it('says how many bytes of a record header are present when the file ends inside one', () => {
    const { file, message } = readerError(TOPK.bytes.slice(0, 2404 + 8));
    expect(message).toBe(`${file}: truncated at byte 2404: 8 bytes of a 16-byte record header`);
  });

  it('names payload size and checksum of an end record that has them', () => {
    const bad = TOPK.bytes.slice();
    const end = bad.length - 16;
    dv(bad).setUint32(end + 8, 4, true);
    dv(bad).setUint32(end + 12, 0x12, true);
    const { file, message } = readerError(bad);
    expect(message).toBe(`${file}: end record at byte ${end}: payload size 4 and checksum 0x00000012, expected 0 and 0 (file corrupted)`);
  });
});

describe('preamble header length', () => {
  function withLength(len: number): string {
    const bad = TOPK.bytes.slice();
    dv(bad).setUint32(12, len, true);
    return write(bad);
  }

  it('refuses a zero length and one above the maximum', () => {
    for (const len of [0, MAX_HEADER_BYTES + 4]) {
      const file = withLength(len);
      const want = `${file}: byte 12: header length ${len}: expected a non-zero multiple of 4 up to ${MAX_HEADER_BYTES} (file corrupted)`;
      expect(thrown(() => readTraceHeader(file))).toBe(want);
      expect(thrown(() => openTrace(file))).toBe(want);
    }
  });

  it('accepts the maximum length itself and then reports the file too short for it', () => {
    const file = withLength(MAX_HEADER_BYTES);
    expect(thrown(() => openTrace(file))).toBe(
      `${file}: truncated in the header JSON: it needs bytes 20..${20 + MAX_HEADER_BYTES}, the file has ${TOPK.bytes.length}`,
    );
  });

  it('closes the file after reading the header', () => {
    const fds = (): number => fs.readdirSync('/proc/self/fd').length;
    readTraceHeader(TOPK.file);
    const before = fds();
    for (let i = 0; i < 5; i++) readTraceHeader(TOPK.file);
    expect(fds()).toBe(before);
  });
});

describe('small buffers', () => {
  for (const good of [TOPK, DENSE]) {
    const name = good === TOPK ? 'topk' : 'dense';
    const reference = readAll(good.file);

    it(`${name}: every step read with 64-, 100-, 4096-byte and odd-sized buffers equals the default read`, () => {
      expect(reference.length).toBe(6);
      for (const chunkBytes of [1, 64, 100, 4096, 1030, good.bytes.length - 3, good.bytes.length + 64]) {
        const steps = readAll(good.file, { chunkBytes });
        expect(steps.length).toBe(6);
        for (let s = 0; s < 6; s++) {
          const [a, b] = [steps[s]!, reference[s]!];
          expect(a.step).toBe(b.step);
          expect(a.contextTokens).toBe(b.contextTokens);
          expect(a.layers.length).toBe(4);
          for (let r = 0; r < 4; r++) {
            const [x, y] = [a.layers[r]!, b.layers[r]!];
            expect(x.nBlocks).toBe(y.nBlocks);
            expect(x.idx === null ? null : Array.from(x.idx)).toEqual(y.idx === null ? null : Array.from(y.idx));
            expect(Array.from(x.mass)).toEqual(Array.from(y.mass));
            expect(x.remainder).toBe(y.remainder);
            expect(x.normFrom).toBe(y.normFrom);
            expect(Array.from(x.norms)).toEqual(Array.from(y.norms));
          }
        }
      }
    });

    it(`${name}: replays twice from one reader and reports position with 64- and 100-byte buffers`, () => {
      for (const chunkBytes of [64, 100, undefined]) {
        const r = openTrace(good.file, { chunkBytes });
        try {
          expect(r.stepsRead).toBe(0);
          expect(r.recordOffset).toBe(-1);
          const it = r[Symbol.iterator]();
          expect(it[Symbol.iterator]()).toBe(it);
          const offsets: number[] = [];
          const first: TraceStep[] = [];
          for (const s of it) {
            first.push(cloneStep(s));
            offsets.push(r.recordOffset);
          }
          expect(r.stepsRead).toBe(6);
          // the last offset is the end record's
          expect(offsets).toEqual([...Array.from({ length: 6 }, (_, s) => locateRow(good.bytes, s, 0).recordAt)]);
          expect(r.recordOffset).toBe(good.bytes.length - 16);
          expect(first).toEqual(reference);
          const second: TraceStep[] = [];
          for (const s of r) second.push(cloneStep(s));
          expect(second).toEqual(reference);
          r.rewind();
          expect(r.recordOffset).toBe(-1);
          expect(r.stepsRead).toBe(0);
          // a partial read, a rewind, then the whole trace again
          expect(cloneStep(r.readStep()!)).toEqual(reference[0]);
          expect(cloneStep(r.readStep()!)).toEqual(reference[1]);
          r.rewind();
          expect(Array.from({ length: 6 }, () => cloneStep(r.readStep()!))).toEqual(reference);
          expect(r.readStep()).toBeNull();
          expect(r.readStep()).toBeNull();
        } finally {
          r.close();
        }
        // closing twice is harmless; reading after close is an error naming the file
        r.close();
        r.rewind();
        expect(thrown(() => r.readStep())).toBe(`${good.file}: the reader is closed`);
      }
    });
  }
});

describe('reads from the file', () => {
  /** Every fs.readSync call (requested length, file position, bytes returned) made by `f`. */
  function reads(f: () => void): Array<{ length: number; position: number; got: number }> {
    const cjs = createRequire(import.meta.url)('node:fs') as typeof fs;
    const original = cjs.readSync;
    const calls: Array<{ length: number; position: number; got: number }> = [];
    cjs.readSync = ((fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number => {
      const got = original(fd, buffer, offset, length, position);
      calls.push({ length, position, got });
      return got;
    }) as typeof fs.readSync;
    syncBuiltinESMExports();
    try {
      f();
    } finally {
      cjs.readSync = original;
      syncBuiltinESMExports();
    }
    return calls;
  }

  for (const good of [TOPK, DENSE]) {
    const name = good === TOPK ? 'topk' : 'dense';
    const headerBytes = dv(good.bytes).getUint32(12, true);

    it(`${name}: the default buffer reads preamble, header JSON and all records in three reads`, () => {
      for (const options of [undefined, { chunkBytes: 4096 }]) {
        const calls = reads(() => readAll(good.file, options));
        expect(calls).toEqual([
          { length: 20, position: 0, got: 20 },
          { length: headerBytes, position: 20, got: headerBytes },
          { length: good.bytes.length - 20 - headerBytes, position: 20 + headerBytes, got: good.bytes.length - 20 - headerBytes },
        ]);
      }
    });

    it(`${name}: small buffers read every byte once, in order, never past the end of the file`, () => {
      for (const chunkBytes of [64, 100, 1030]) {
        const calls = reads(() => readAll(good.file, { chunkBytes }));
        let next = 0;
        for (const c of calls) {
          expect(c.position).toBe(next);
          expect(c.length).toBeGreaterThan(0);
          expect(c.got).toBe(c.length);
          next += c.got;
        }
        expect(next).toBe(good.bytes.length);
      }
    });

    it(`${name}: a 64-byte buffer grows only to hold the largest record, not the whole file`, () => {
      let largest = 0;
      for (let s = 0; s < 6; s++) {
        const at = locateRow(good.bytes, s, 0).recordAt;
        largest = Math.max(largest, 16 + dv(good.bytes).getUint32(at + 8, true));
      }
      const bound = Math.ceil((largest * 1.25) / 64) * 64;
      expect(bound).toBeLessThan(good.bytes.length - 20 - headerBytes);
      const calls = reads(() => readAll(good.file, { chunkBytes: 64 }));
      expect(calls.length).toBeGreaterThan(3);
      for (const c of calls.slice(2)) expect(c.length).toBeLessThanOrEqual(bound);
    });

  }
});
