import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTrace, readTraceHeader } from '../../traces/trace-reader.js';
import { validateTrace } from '../../traces/validate-trace.js';
import { encodeRaw, header, tmpDir, variedSteps } from './raw-kvt.js';

function readAll(file: string): number {
  const r = openTrace(file, { chunkBytes: 64 });
  try {
    let n = 0;
    while (r.readStep() !== null) n++;
    return n;
  } finally {
    r.close();
  }
}

const H = header({ steps: 5, encoding: 'topk', topk: 3 });
const GOOD = encodeRaw(H, variedSteps(H));
const dataStart = 20 + Math.ceil(JSON.stringify(H).length / 4) * 4;

function fileWith(bytes: Uint8Array, name = 'trace.kvt'): string {
  const file = path.join(tmpDir(), name);
  fs.writeFileSync(file, bytes);
  return file;
}

describe('corruption', () => {
  it('reports a flipped byte in the middle of a record as a checksum mismatch naming step and byte', () => {
    // record of step 2: find its offset by walking the record headers
    const dv = new DataView(GOOD.buffer);
    let at = dataStart;
    for (let s = 0; s < 2; s++) at += 16 + dv.getUint32(at + 8, true);
    const bytes = GOOD.slice();
    const mid = at + 16 + Math.floor(dv.getUint32(at + 8, true) / 2);
    bytes[mid] ^= 0x10;
    const file = fileWith(bytes);
    expect(() => readAll(file)).toThrow(`${file}: record for step 2 at byte ${at}: checksum mismatch`);
    expect(() => readAll(file)).toThrow(/\(file corrupted\)/);
  });

  it('detects every single-byte corruption anywhere in the file (reader or validateTrace throws)', () => {
    let detected = 0;
    for (let i = 0; i < GOOD.length; i++) {
      const bytes = GOOD.slice();
      bytes[i] ^= i % 2 === 0 ? 0x01 : 0x80;
      const file = fileWith(bytes);
      expect(() => validateTrace(file), `flipped byte ${i}`).toThrow();
      detected++;
    }
    expect(detected).toBe(GOOD.length);
    expect(validateTrace(fileWith(GOOD)).ok).toBe(true);
  });

  it('names the problem for bad magic, version, header checksum, record magic and trailing bytes', () => {
    const cases: [string, (b: Uint8Array) => Uint8Array, RegExp][] = [
      ['magic', (b) => ((b[3] = 0x58), b), /trace\.kvt: byte 3: bad magic, expected "KVTRACE\\0" \(not a kvtier attention trace\)/],
      ['version', (b) => ((b[8] = 2), b), /trace\.kvt: byte 8: unsupported format version 2 \(this reader reads version 1\)/],
      ['header length', (b) => ((b[12] ^= 1), b), /trace\.kvt: byte 12: header length \d+: expected a non-zero multiple of 4/],
      ['header text', (b) => ((b[30] ^= 4), b), /trace\.kvt: byte 16: header checksum mismatch: stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8} \(file corrupted\)/],
      ['record magic', (b) => ((b[dataStart] = 0x41), b), new RegExp(`record for step 0 at byte ${dataStart}: bad record magic 0x[0-9a-f]+, expected "KVST"`)],
      ['step number', (b) => ((b[dataStart + 4] = 9), b), new RegExp(`record for step 0 at byte ${dataStart}: step number 9, expected 0`)],
      ['trailing bytes', (b) => Uint8Array.from([...b, 0, 0, 0, 0]), /end record at byte \d+: 4 unexpected bytes after the end record/],
      ['end count', (b) => ((b[b.length - 12] = 4), b), /end record at byte \d+: step count 4, but 5 step records precede it/],
    ];
    for (const [name, corrupt, message] of cases) {
      const file = fileWith(corrupt(GOOD.slice()));
      expect(() => readAll(file), name).toThrow(message);
    }
  });

  it('reports an empty or foreign file clearly', () => {
    expect(() => readTraceHeader(fileWith(new Uint8Array(0)))).toThrow(/trace\.kvt: empty file \(not a kvtier attention trace\)/);
    expect(() => readTraceHeader(fileWith(Buffer.from('{"format": "json"}')))).toThrow(/byte 0: bad magic/);
  });
});

describe('truncation', () => {
  it('throws at every cut offset; no cut ever reads as a complete trace', () => {
    for (let cut = 0; cut < GOOD.length; cut++) {
      const file = fileWith(GOOD.subarray(0, cut));
      expect(() => readAll(file), `cut at ${cut}`).toThrow(/truncated|empty file/);
    }
    expect(readAll(fileWith(GOOD))).toBe(5);
  });

  it('says after which step the file ends when it ends between records', () => {
    const dv = new DataView(GOOD.buffer);
    let at = dataStart;
    expect(() => readAll(fileWith(GOOD.subarray(0, at)))).toThrow('trace.kvt: truncated after the file header (0 of 5 steps present; no end record)');
    for (let s = 0; s < 5; s++) {
      at += 16 + dv.getUint32(at + 8, true);
      const file = fileWith(GOOD.subarray(0, at));
      expect(() => readAll(file)).toThrow(`trace.kvt: truncated after step ${s} (${s + 1} of 5 steps present; no end record)`);
    }
  });

  it('says how much of a record is missing when it ends inside one', () => {
    const file = fileWith(GOOD.subarray(0, dataStart + 20));
    expect(() => readAll(file)).toThrow(new RegExp(`record for step 0 at byte ${dataStart}: truncated: the record needs \\d+ bytes, the file has 20`));
  });

  it('rejects a file whose end record counts fewer steps than the header', () => {
    const file = fileWith(encodeRaw(H, variedSteps(H).slice(0, 3)));
    expect(() => readAll(file)).toThrow(/end record at byte \d+: the file holds 3 steps, the header declares 5/);
  });
});
