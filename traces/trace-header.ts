/**
 * Header checks and encoding shared by the writer and the reader: every TraceHeader field, its
 * type and range, and the JSON bytes (UTF-8, space-padded to a multiple of 4) that the file holds.
 */
import { pad4 } from './binary-layout.js';
import { TRACE_FORMAT, TRACE_VERSION, type TraceHeader } from './format.js';

function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return String(v);
}

function fieldError(where: string, field: string, expected: string, got: unknown): Error {
  return new Error(`${where}: header field '${field}': expected ${expected}, got ${describe(got)}`);
}

function intField(h: Record<string, unknown>, where: string, field: string, min: number): number {
  const v = h[field];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 0xffffffff) {
    throw fieldError(where, field, `an integer >= ${min} (and < 2^32)`, v);
  }
  return v;
}

/**
 * Check a parsed header (what JSON.parse gave, or what a writer was handed) and return it as a
 * TraceHeader. `where` prefixes every message (the file name). Unknown extra fields are kept: a
 * later v1 writer may add fields, readers ignore what they do not know.
 */
export function checkTraceHeader(value: unknown, where: string): TraceHeader {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`${where}: header: expected a JSON object, got ${describe(value)}`);
  }
  const h = value as Record<string, unknown>;
  if (h.format !== TRACE_FORMAT) throw fieldError(where, 'format', JSON.stringify(TRACE_FORMAT), h.format);
  if (h.version !== TRACE_VERSION) throw fieldError(where, 'version', String(TRACE_VERSION), h.version);
  if (typeof h.model !== 'string' || h.model.length === 0) throw fieldError(where, 'model', 'a non-empty string', h.model);
  intField(h, where, 'layers', 1);
  intField(h, where, 'block_size', 1);
  intField(h, where, 'prompt_tokens', 0);
  intField(h, where, 'steps', 0);
  intField(h, where, 'kv_groups', 1);
  if (h.encoding !== 'dense' && h.encoding !== 'topk') throw fieldError(where, 'encoding', '"dense" or "topk"', h.encoding);
  if (h.encoding === 'topk') {
    intField(h, where, 'topk', 1);
  } else if (h.topk !== undefined && h.topk !== null) {
    throw fieldError(where, 'topk', 'no value for a dense trace (absent or null)', h.topk);
  }
  const p = h.provenance;
  if (typeof p !== 'object' || p === null || Array.isArray(p)) throw fieldError(where, 'provenance', 'a JSON object', p);
  const out = { ...h } as unknown as TraceHeader;
  if (h.encoding === 'dense') delete out.topk;
  return out;
}

/** JSON.stringify of the header, UTF-8, padded with spaces to a multiple of 4 bytes. */
export function encodeTraceHeader(header: TraceHeader): Uint8Array {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const bytes = new Uint8Array(new ArrayBuffer(pad4(json.length)));
  bytes.fill(0x20);
  bytes.set(json, 0);
  return bytes;
}
