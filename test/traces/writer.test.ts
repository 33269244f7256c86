import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LayerAttention, TraceHeader, TraceStep } from '../../traces/format.js';
import { TraceWriter } from '../../traces/trace-writer.js';
import { openTrace } from '../../traces/trace-reader.js';
import { validateTrace } from '../../traces/validate-trace.js';
import { encodeRaw, header, tmpDir, variedSteps } from './raw-kvt.js';

function writeAll(file: string, h: TraceHeader, steps: TraceStep[], overwrite = false): void {
  const w = new TraceWriter(file, h, { overwrite });
  for (const s of steps) w.writeStep(s);
  w.close();
}

describe('TraceWriter files', () => {
  it('writes to .partial and renames on close', () => {
    const file = path.join(tmpDir(), 'a.kvt');
    const h = header();
    const w = new TraceWriter(file, h);
    for (const s of variedSteps(h)) w.writeStep(s);
    expect(fs.existsSync(`${file}.partial`)).toBe(true);
    expect(fs.existsSync(file)).toBe(false);
    w.close();
    expect(fs.existsSync(`${file}.partial`)).toBe(false);
    expect(validateTrace(file).steps).toBe(3);
  });

  it('refuses to overwrite an existing file unless { overwrite: true }', () => {
    const file = path.join(tmpDir(), 'a.kvt');
    fs.writeFileSync(file, 'precious');
    expect(() => new TraceWriter(file, header())).toThrow(`${file}: file exists; pass { overwrite: true } to replace it`);
    expect(fs.readFileSync(file, 'utf8')).toBe('precious');
    writeAll(file, header(), variedSteps(header()), true);
    expect(validateTrace(file).ok).toBe(true);
  });

  it('refuses to close before all header.steps steps; abort() removes the partial file', () => {
    const file = path.join(tmpDir(), 'a.kvt');
    const h = header({ steps: 3 });
    const w = new TraceWriter(file, h);
    w.writeStep(variedSteps(h)[0]!);
    expect(() => w.close()).toThrow(`${file}: close() after 1 of 3 steps`);
    expect(fs.existsSync(file)).toBe(false);
    w.abort();
    expect(fs.existsSync(`${file}.partial`)).toBe(false);
    expect(() => w.writeStep(variedSteps(h)[1]!)).toThrow(/the writer is closed/);
  });

  it('refuses more steps than the header declares', () => {
    const h = header({ steps: 1 });
    const w = new TraceWriter(path.join(tmpDir(), 'a.kvt'), h);
    w.writeStep(variedSteps(h)[0]!);
    const extra = variedSteps(header({ steps: 2 }))[1]!;
    expect(() => w.writeStep(extra)).toThrow(/step 1: the header declares 1 steps; no more can be written/);
    w.abort();
  });

  it('keeps the file valid when a rejected step is followed by a correct one', () => {
    const file = path.join(tmpDir(), 'a.kvt');
    const h = header();
    const steps = variedSteps(h);
    const w = new TraceWriter(file, h);
    w.writeStep(steps[0]!);
    expect(() => w.writeStep(steps[2]!)).toThrow(/field 'step': expected 1/);
    w.writeStep(steps[1]!);
    w.writeStep(steps[2]!);
    w.close();
    expect(new Uint8Array(fs.readFileSync(file))).toEqual(encodeRaw(h, steps));
  });
});

describe('TraceWriter step checks', () => {
  const dense = header({ steps: 1 }); // context 11 tokens, block 4 => 3 blocks, 2 layers
  const topk = header({ steps: 1, encoding: 'topk', topk: 2 });
  const layer = (h: TraceHeader, over: Partial<LayerAttention>): TraceStep => {
    const s = variedSteps(h)[0]!;
    s.layers[1] = { ...s.layers[1]!, ...over };
    return s;
  };
  const cases: [string, TraceHeader, (h: TraceHeader) => TraceStep, RegExp][] = [
    ['step number', dense, (h) => ({ ...variedSteps(h)[0]!, step: 1 }), /step 0: field 'step': expected 0 \(steps are numbered consecutively from 0\), got 1/],
    ['contextTokens', dense, (h) => ({ ...variedSteps(h)[0]!, contextTokens: 12 }), /field 'contextTokens': expected 11 \(prompt_tokens \+ step \+ 1\), got 12/],
    ['layer count', dense, (h) => ({ ...variedSteps(h)[0]!, layers: variedSteps(h)[0]!.layers.slice(1) }), /field 'layers': expected 2 entries \(layers x kv_groups\), got 1/],
    ['nBlocks', dense, (h) => layer(h, { nBlocks: 4 }), /step 0: layer 1: field 'nBlocks': expected 3 \(ceil\(contextTokens \/ block_size\)\), got 4/],
    ['dense length', dense, (h) => layer(h, { mass: Float32Array.of(0.5, 0.5) }), /layer 1: field 'mass': expected 3 entries \(dense: one per block\), got 2/],
    ['dense idx', dense, (h) => layer(h, { idx: Uint32Array.of(0, 1, 2) }), /layer 1: field 'idx': expected null in a dense trace/],
    ['NaN mass', dense, (h) => layer(h, { mass: Float32Array.of(NaN, 0.5, 0.5) }), /layer 1: field 'mass\[0\]': expected a finite number in \[0, 1\], got NaN/],
    ['mass > 1', dense, (h) => layer(h, { mass: Float32Array.of(0, 1.5, 0) }), /field 'mass\[1\]': expected a finite number in \[0, 1\], got 1\.5/],
    ['negative mass', dense, (h) => layer(h, { mass: Float32Array.of(0.5, 0.75, -0.25) }), /field 'mass\[2\]': expected a finite number in \[0, 1\], got -0\.25/],
    ['sum', dense, (h) => layer(h, { mass: Float32Array.of(0.25, 0.25, 0.25) }), /layer 1: field 'mass': listed mass \+ remainder is 0\.75, expected 1 \(within 0\.001\)/],
    ['dense remainder', dense, (h) => layer(h, { remainder: 0.1 }), /field 'remainder': expected 0 in a dense trace, got 0\.1/],
    ['norms past nBlocks', dense, (h) => layer(h, { normFrom: 2, norms: Float32Array.of(1, 1) }), /field 'norms': normFrom \(2\) \+ 2 norms exceeds nBlocks \(3\)/],
    ['negative norm', dense, (h) => layer(h, { norms: Float32Array.of(-1) }), /field 'norms\[0\]': expected a finite number >= 0, got -1/],
    ['normFrom', dense, (h) => layer(h, { normFrom: -1 }), /field 'normFrom': expected an integer >= 0, got -1/],
    ['topk too many', topk, (h) => layer(h, { idx: Uint32Array.of(0, 1, 2), mass: Float32Array.of(0.3, 0.3, 0.4), remainder: 0 }), /field 'mass': expected at most 2 entries \(min\(topk, nBlocks\)\), got 3/],
    ['topk idx range', topk, (h) => layer(h, { idx: Uint32Array.of(0, 3) }), /layer 1: field 'idx\[1\]': expected a block index < nBlocks \(3\), got 3/],
    ['topk duplicate', topk, (h) => layer(h, { idx: Uint32Array.of(2, 2) }), /field 'idx\[1\]': block 2 is listed twice \(indices must be unique\)/],
    ['topk idx null', topk, (h) => layer(h, { idx: null }), /field 'idx': expected a Uint32Array in a topk trace/],
    ['topk idx length', topk, (h) => layer(h, { idx: Uint32Array.of(1) }), /field 'idx': expected 2 entries \(as many as mass\), got 1/],
    ['topk remainder', topk, (h) => layer(h, { remainder: 1.5 }), /field 'remainder': expected a finite number in \[0, 1\], got 1\.5/],
    ['topk sum', topk, (h) => layer(h, { remainder: 0.9 }), /field 'mass': listed mass \+ remainder is 1\.\d+, expected 1/],
    ['typed arrays', dense, (h) => layer(h, { mass: [1, 0, 0] as unknown as Float32Array }), /field 'mass': expected a Float32Array/],
  ];
  it.each(cases)('%s', (_name, h, make, message) => {
    const file = path.join(tmpDir(), 'a.kvt');
    const w = new TraceWriter(file, h);
    expect(() => w.writeStep(make(h))).toThrow(message);
    expect(() => w.writeStep(make(h))).toThrow(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: step 0: `));
    w.writeStep(variedSteps(h)[0]!); // the writer is still usable
    w.close();
    expect(validateTrace(file).ok).toBe(true);
  });

  it('names the KV group when a trace records several', () => {
    const h = header({ steps: 1, kv_groups: 2 });
    const s = variedSteps(h)[0]!;
    s.layers[3] = { ...s.layers[3]!, nBlocks: 9 };
    const w = new TraceWriter(path.join(tmpDir(), 'a.kvt'), h);
    expect(() => w.writeStep(s)).toThrow(/step 0: layer 1 group 1: field 'nBlocks'/);
    w.abort();
  });

  it('honours massTolerance', () => {
    const h = header({ steps: 1 });
    const s = variedSteps(h)[0]!;
    s.layers[0] = { ...s.layers[0]!, mass: s.layers[0]!.mass.map((v) => v * 0.995) };
    const strict = new TraceWriter(path.join(tmpDir(), 'a.kvt'), h);
    expect(() => strict.writeStep(s)).toThrow(/within 0\.001/);
    strict.abort();
    const loose = new TraceWriter(path.join(tmpDir(), 'b.kvt'), h, { massTolerance: 0.01 });
    loose.writeStep(s);
    loose.close();
  });
});

describe('validateTrace', () => {
  it('finds value errors the writer would have refused, naming byte offset, step, layer and field', () => {
    const h = header({ steps: 2, encoding: 'topk', topk: 2 });
    const steps = variedSteps(h);
    steps[1]!.layers[0]!.idx![1] = steps[1]!.layers[0]!.idx![0]!; // duplicate index
    const file = path.join(tmpDir(), 'dup.kvt');
    fs.writeFileSync(file, encodeRaw(h, steps));
    const at = 20 + Math.ceil(JSON.stringify(h).length / 4) * 4 + 16 + new DataView(encodeRaw(h, steps).buffer).getUint32(20 + Math.ceil(JSON.stringify(h).length / 4) * 4 + 8, true);
    expect(() => validateTrace(file)).toThrow(`${file}: record for step 1 at byte ${at}: layer 0: field 'idx[1]': block`);
  });

  it('refuses a listed index past the layer\'s blocks while reading (the reader, not only validateTrace)', () => {
    const h = header({ steps: 2, encoding: 'topk', topk: 2 });
    const steps = variedSteps(h);
    const n = steps[1]!.layers[0]!.nBlocks;
    steps[1]!.layers[0]!.idx![1] = n; // one past the last block
    const file = path.join(tmpDir(), 'far.kvt');
    const bytes = encodeRaw(h, steps);
    fs.writeFileSync(file, bytes);
    const step0 = 20 + Math.ceil(JSON.stringify(h).length / 4) * 4;
    const at = step0 + 16 + new DataView(bytes.buffer).getUint32(step0 + 8, true);
    const r = openTrace(file);
    try {
      expect(() => [...r]).toThrow(`${file}: record for step 1 at byte ${at}: layer 0: field 'idx[1]': expected a block index < nBlocks (${n}), got ${n}`);
    } finally {
      r.close();
    }
  });

  it('reads through the reader, so structural errors surface too', () => {
    const h = header({ steps: 2 });
    const file = path.join(tmpDir(), 'short.kvt');
    fs.writeFileSync(file, encodeRaw(h, variedSteps(h), { noEnd: true }));
    expect(() => validateTrace(file)).toThrow(/truncated after step 1 \(2 of 2 steps present; no end record\)/);
  });
});
