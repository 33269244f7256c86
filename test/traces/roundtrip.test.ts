import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cloneStep } from '../../traces/clone-step.js';
import type { TraceHeader, TraceStep } from '../../traces/format.js';
import { openTrace, readTraceHeader } from '../../traces/trace-reader.js';
import { TraceWriter } from '../../traces/trace-writer.js';
import { validateTrace } from '../../traces/validate-trace.js';
import { encodeRaw, header, tmpDir, variedSteps } from './raw-kvt.js';

function write(file: string, h: TraceHeader, steps: TraceStep[]): void {
  const w = new TraceWriter(file, h);
  for (const s of steps) w.writeStep(s);
  w.close();
}

function expectSameSteps(got: TraceStep[], want: TraceStep[]): void {
  expect(got.length).toBe(want.length);
  for (let s = 0; s < want.length; s++) {
    expect(got[s]!.step).toBe(want[s]!.step);
    expect(got[s]!.contextTokens).toBe(want[s]!.contextTokens);
    expect(got[s]!.layers.length).toBe(want[s]!.layers.length);
    want[s]!.layers.forEach((a, r) => {
      const b = got[s]!.layers[r]!;
      expect(b.nBlocks).toBe(a.nBlocks);
      expect(b.idx === null ? null : Array.from(b.idx)).toEqual(a.idx === null ? null : Array.from(a.idx));
      expect(Array.from(b.mass)).toEqual(Array.from(a.mass));
      expect(b.remainder).toBe(Math.fround(a.remainder));
      expect(b.normFrom).toBe(a.normFrom);
      expect(Array.from(b.norms)).toEqual(Array.from(a.norms));
    });
  }
}

// nBlocks 1 (prompt 0, block 16), 19 and 99 at step 0, odd block sizes, several KV groups
const SHAPES: [string, Partial<TraceHeader>][] = [
  ['dense, 1 block', { prompt_tokens: 0, block_size: 16, steps: 4 }],
  ['dense, 19 blocks, block 3', { prompt_tokens: 56, block_size: 3, steps: 7 }],
  ['dense, 99 blocks, 3 layers x 2 groups', { prompt_tokens: 98, block_size: 1, steps: 3, layers: 3, kv_groups: 2 }],
  ['topk k=5, 1 block', { prompt_tokens: 0, block_size: 16, steps: 4, encoding: 'topk', topk: 5 }],
  ['topk k=5, 19 blocks', { prompt_tokens: 56, block_size: 3, steps: 7, encoding: 'topk', topk: 5 }],
  ['topk k=128 > 99 blocks', { prompt_tokens: 98, block_size: 1, steps: 3, encoding: 'topk', topk: 128 }],
  ['topk k=1, 99 blocks, 5 groups', { prompt_tokens: 98, block_size: 1, steps: 2, encoding: 'topk', topk: 1, kv_groups: 5 }],
];

describe('TraceWriter -> TraceReader round trip', () => {
  it.each(SHAPES)('%s', (_name, over) => {
    const dir = tmpDir();
    const file = path.join(dir, 't.kvt');
    const h = header(over);
    const steps = variedSteps(h);
    write(file, h, steps);
    // the file is exactly what the independent encoder from FORMAT.md produces
    expect(new Uint8Array(fs.readFileSync(file))).toEqual(encodeRaw(h, steps));
    expect(readTraceHeader(file)).toEqual(h);
    // a tiny chunk forces buffer growth and compaction on every record
    for (const chunkBytes of [64, 1 << 20]) {
      const r = openTrace(file, { chunkBytes });
      expect(r.header).toEqual(h);
      const got = Array.from(r, cloneStep); // clone while iterating: views die at the next step
      expectSameSteps(got, steps);
      // a second for..of replays from the start
      expect([...r].length).toBe(h.steps);
      r.close();
    }
    expect(validateTrace(file)).toMatchObject({ ok: true, steps: h.steps, bytes: fs.statSync(file).size });
  });

  it('hands out views valid until the next step (documented), which cloneStep keeps', () => {
    const dir = tmpDir();
    const file = path.join(dir, 't.kvt');
    const h = header({ prompt_tokens: 40, steps: 30 });
    const steps = variedSteps(h);
    write(file, h, steps);
    const r = openTrace(file, { chunkBytes: 64 });
    const first = r.readStep()!;
    const kept = cloneStep(first);
    expect(first.layers[0]!.mass.buffer).toBeInstanceOf(ArrayBuffer);
    for (let s = r.readStep(); s !== null; s = r.readStep());
    expect(Array.from(kept.layers[0]!.mass)).toEqual(Array.from(steps[0]!.layers[0]!.mass));
    expect(r.readStep()).toBeNull();
    r.close();
    r.rewind();
    expect(() => r.readStep()).toThrow(/t\.kvt: the reader is closed/);
  });

  it('writes a trace with zero steps (header and end record only)', () => {
    const file = path.join(tmpDir(), 'empty.kvt');
    write(file, header({ steps: 0 }), []);
    expect([...openTrace(file)]).toEqual([]);
    expect(validateTrace(file).steps).toBe(0);
  });

  it('lays the file out as FORMAT.md says, byte by byte (hand-computed)', () => {
    const file = path.join(tmpDir(), 'one.kvt');
    const h = header({ layers: 1, steps: 1, prompt_tokens: 3, block_size: 4, provenance: {} });
    const step: TraceStep = {
      step: 0,
      contextTokens: 4,
      layers: [{ nBlocks: 1, idx: null, mass: Float32Array.of(1), remainder: 0, normFrom: 0, norms: Float32Array.of(2) }],
    };
    write(file, h, [step]);
    const b = fs.readFileSync(file);
    const json = JSON.stringify(h);
    const jsonBytes = Math.ceil(json.length / 4) * 4;
    expect(b.subarray(0, 8).toString('latin1')).toBe('KVTRACE\0');
    expect(b.readUInt32LE(8)).toBe(1);
    expect(b.readUInt32LE(12)).toBe(jsonBytes);
    expect(b.subarray(20, 20 + jsonBytes).toString('utf8').trimEnd()).toBe(json);
    const r = 20 + jsonBytes;
    expect(b.subarray(r, r + 4).toString('latin1')).toBe('KVST');
    expect(b.readUInt32LE(r + 4)).toBe(0);
    expect(b.readUInt32LE(r + 8)).toBe(28); // 5 fixed words + 1 mass + 1 norm
    // payload words: 1, 1, 0.0f, 0, 1, 1.0f (0x3f800000), 2.0f (0x40000000)
    const words = [1, 1, 0, 0, 1, 0x3f800000, 0x40000000];
    const sum = words.reduce((c, w, i) => (c + w * (2 * i + 1)) % 2 ** 32, 0);
    expect(b.readUInt32LE(r + 12)).toBe(sum);
    expect(words.map((_, i) => b.readUInt32LE(r + 16 + 4 * i))).toEqual(words);
    const e = r + 16 + 28;
    expect(b.subarray(e, e + 4).toString('latin1')).toBe('KEND');
    expect([b.readUInt32LE(e + 4), b.readUInt32LE(e + 8), b.readUInt32LE(e + 12)]).toEqual([1, 0, 0]);
    expect(b.length).toBe(e + 16);
  });
});
