/** Checked conversions of one trace field; each failure is a TraceFormatError naming the field. */
import { TraceFormatError } from './trace-format-error.js';

export interface FieldSite {
  file: string;
  line: number;
}

function show(value: unknown): string {
  const s = typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value) ?? String(value);
  return s.length > 40 ? `${s.slice(0, 40)}...` : s;
}

/** A number from JSON, or a decimal string from CSV (blank is missing). */
function toNumber(site: FieldSite, field: string, value: unknown): number {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
    throw new TraceFormatError(site.file, site.line, field, 'missing');
  }
  const n = typeof value === 'string' ? Number(value.trim()) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) {
    throw new TraceFormatError(site.file, site.line, field, `expected a number, got ${show(value)}`);
  }
  return n;
}

export function nonNegativeNumber(site: FieldSite, field: string, value: unknown): number {
  const n = toNumber(site, field, value);
  if (n < 0) throw new TraceFormatError(site.file, site.line, field, `must be >= 0, got ${n}`);
  return n;
}

export function integerAtLeast(site: FieldSite, field: string, value: unknown, min: number): number {
  const n = toNumber(site, field, value);
  if (!Number.isSafeInteger(n)) throw new TraceFormatError(site.file, site.line, field, `expected an integer, got ${show(value)}`);
  if (n < min) throw new TraceFormatError(site.file, site.line, field, `must be >= ${min}, got ${n}`);
  return n;
}

/**
 * Prefix block hashes: non-negative integers, no repeats, at most ceil(inputTokens / blockTokens)
 * of them (a block past the end of the input cannot exist).
 */
export function blockHashes(site: FieldSite, field: string, value: unknown, inputTokens: number, blockTokens: number): number[] {
  if (!Array.isArray(value)) throw new TraceFormatError(site.file, site.line, field, `expected an array of integers, got ${show(value)}`);
  const maxBlocks = Math.ceil(inputTokens / blockTokens);
  if (value.length > maxBlocks) {
    throw new TraceFormatError(
      site.file,
      site.line,
      field,
      `${value.length} blocks for ${inputTokens} input tokens (at most ${maxBlocks} blocks of ${blockTokens} tokens)`,
    );
  }
  const seen = new Set<number>();
  for (let i = 0; i < value.length; i++) {
    const h: unknown = value[i];
    if (typeof h !== 'number' || !Number.isSafeInteger(h) || h < 0) {
      throw new TraceFormatError(site.file, site.line, `${field}[${i}]`, `expected a non-negative integer, got ${show(h)}`);
    }
    if (seen.has(h)) throw new TraceFormatError(site.file, site.line, `${field}[${i}]`, `repeats block id ${h}`);
    seen.add(h);
  }
  return value as number[];
}
