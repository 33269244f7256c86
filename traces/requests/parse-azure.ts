/**
 * Azure LLM inference trace CSV (AzurePublicDataset, 2023/2024): `TIMESTAMP, ContextTokens,
 * GeneratedTokens`, the timestamp as `YYYY-MM-DD hh:mm:ss[.fraction]` (UTC). Arrivals are made
 * relative to the earliest one. The trace has no prefix hashes, so no KV can be reused.
 */
import { collectRequests, splitLines, type CollectOptions, type ParsedRequest } from './collect-requests.js';
import { checkWidth, csvHeader, splitCsvRow } from './csv-table.js';
import { integerAtLeast } from './field-parsers.js';
import { MOONCAKE_BLOCK_TOKENS, type RequestTrace } from './request.js';
import { TraceFormatError } from './trace-format-error.js';

const COLUMNS = ['TIMESTAMP', 'ContextTokens', 'GeneratedTokens'] as const;
const STAMP = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d+)?Z?$/;

/**
 * Milliseconds since 2020-01-01 00:00 UTC of an Azure timestamp, or NaN when it is not one. (A
 * nearer origin than the Unix epoch keeps the sub-millisecond digits in a double.)
 */
export const AZURE_TIME_ORIGIN_MS = Date.UTC(2020, 0, 1);

export function parseAzureTimestamp(s: string): number {
  const m = STAMP.exec(s.trim());
  if (!m) return Number.NaN;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map(Number);
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return Number.NaN;
  const frac = m[7] ? Number(m[7]) * 1000 : 0;
  return Date.UTC(y, mo - 1, d, h, mi, sec) - AZURE_TIME_ORIGIN_MS + frac;
}

export function parseAzure(text: string, file: string, opts: CollectOptions = {}): RequestTrace {
  const lines = splitLines(text);
  const { headerLine, width, index } = csvHeader(lines, file, COLUMNS);
  const trace = collectRequests(file, 'azure', MOONCAKE_BLOCK_TOKENS, lines, headerLine + 1, (lineText, line): ParsedRequest => {
    const f = splitCsvRow(lineText, file, line);
    checkWidth(f, width, file, line);
    const site = { file, line };
    const stamp = f[index.TIMESTAMP];
    const arrival_ms = parseAzureTimestamp(stamp);
    if (Number.isNaN(arrival_ms)) {
      throw new TraceFormatError(file, line, 'TIMESTAMP', `expected "YYYY-MM-DD hh:mm:ss.fff", got ${JSON.stringify(stamp)}`);
    }
    const input_tokens = integerAtLeast(site, 'ContextTokens', f[index.ContextTokens], 1);
    const output_tokens = integerAtLeast(site, 'GeneratedTokens', f[index.GeneratedTokens], 0);
    return { line, arrival_ms, input_tokens, output_tokens, hash_ids: [] };
  }, opts);
  const t0 = trace.requests[0].arrival_ms;
  for (const r of trace.requests) r.arrival_ms -= t0;
  return trace;
}
