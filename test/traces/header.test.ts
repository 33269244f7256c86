import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTraceHeader } from '../../traces/trace-reader.js';
import { TraceWriter } from '../../traces/trace-writer.js';
import { encodeRaw, header, referenceChecksum, tmpDir } from './raw-kvt.js';

function headerFile(h: Record<string, unknown>, json?: string): string {
  const file = path.join(tmpDir(), 'h.kvt');
  fs.writeFileSync(file, encodeRaw(h, [], { json }));
  return file;
}

const base = header() as unknown as Record<string, unknown>;
const without = (k: string) => Object.fromEntries(Object.entries(base).filter(([key]) => key !== k));

describe('header checks (reader and writer)', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['missing layers', without('layers'), /header field 'layers': expected an integer >= 1 \(and < 2\^32\), got undefined/],
    ['negative layers', { ...base, layers: -1 }, /'layers': expected an integer >= 1.*got -1/],
    ['fractional block_size', { ...base, block_size: 1.5 }, /'block_size': expected an integer >= 1.*got 1\.5/],
    ['string prompt_tokens', { ...base, prompt_tokens: '10' }, /'prompt_tokens': expected an integer >= 0.*got "10"/],
    ['steps as null', { ...base, steps: null }, /'steps': expected an integer >= 0.*got null/],
    ['kv_groups 0', { ...base, kv_groups: 0 }, /'kv_groups': expected an integer >= 1/],
    ['unknown encoding', { ...base, encoding: 'sparse' }, /'encoding': expected "dense" or "topk", got "sparse"/],
    ['topk without k', { ...base, encoding: 'topk' }, /'topk': expected an integer >= 1.*got undefined/],
    ['dense with k', { ...base, topk: 8 }, /'topk': expected no value for a dense trace \(absent or null\), got 8/],
    ['wrong format', { ...base, format: 'other' }, /'format': expected "kvtier-attention-trace", got "other"/],
    ['JSON version 2', { ...base, version: 2 }, /'version': expected 1, got 2/],
    ['empty model', { ...base, model: '' }, /'model': expected a non-empty string, got ""/],
    ['provenance array', { ...base, provenance: [] }, /'provenance': expected a JSON object, got an array/],
  ];

  it.each(cases)('reader: %s', (_name, h, message) => {
    const file = headerFile(h);
    expect(() => readTraceHeader(file)).toThrow(message);
    expect(() => readTraceHeader(file)).toThrow(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: header field`));
  });

  it.each(cases)('writer: %s', (_name, h, message) => {
    const file = path.join(tmpDir(), 'w.kvt');
    expect(() => new TraceWriter(file, h as never)).toThrow(message);
    expect(fs.existsSync(`${file}.partial`)).toBe(false);
  });

  it('rejects header text that is not UTF-8 JSON, naming byte 20', () => {
    expect(() => readTraceHeader(headerFile(base, '{"format": '))).toThrow(/h\.kvt: byte 20: header is not UTF-8 JSON/);
    // invalid UTF-8 (0xc3 0x28) inside a string, with a correct header checksum
    const file = path.join(tmpDir(), 'bad-utf8.kvt');
    const bytes = encodeRaw(base, [], { json: '{"model":"__"}  ' });
    bytes.set([0xc3, 0x28], 20 + '{"model":"'.length);
    const len = new DataView(bytes.buffer).getUint32(12, true);
    new DataView(bytes.buffer).setUint32(16, referenceChecksum(bytes.subarray(20, 20 + len)), true);
    fs.writeFileSync(file, bytes);
    expect(() => readTraceHeader(file)).toThrow(/bad-utf8\.kvt: byte 20: header is not UTF-8 JSON/);
    expect(() => readTraceHeader(headerFile(base, '[1, 2]'))).toThrow(/header: expected a JSON object, got an array/);
  });

  it('accepts a null topk for dense traces (Python json.dumps of None) and unknown extra fields', () => {
    const h = readTraceHeader(headerFile({ ...base, topk: null, capture_tool: 'v0' }));
    expect(h.topk).toBeUndefined();
    expect((h as unknown as Record<string, unknown>).capture_tool).toBe('v0');
  });
});
