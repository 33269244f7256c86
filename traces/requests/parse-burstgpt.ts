/**
 * BurstGPT CSV (HPMLL/BurstGPT): `Timestamp` (seconds from the start), `Model`, `Request tokens`,
 * `Response tokens`, `Total tokens`, `Log Type`. Only the timestamp and the token counts are used;
 * failed requests (0 response tokens) are kept as they are. No prefix hashes, so no KV reuse.
 */
import { collectRequests, splitLines, type CollectOptions, type ParsedRequest } from './collect-requests.js';
import { checkWidth, csvHeader, splitCsvRow } from './csv-table.js';
import { integerAtLeast, nonNegativeNumber } from './field-parsers.js';
import { MOONCAKE_BLOCK_TOKENS, type RequestTrace } from './request.js';

const COLUMNS = ['Timestamp', 'Request tokens', 'Response tokens'] as const;

export function parseBurstGpt(text: string, file: string, opts: CollectOptions = {}): RequestTrace {
  const lines = splitLines(text);
  const { headerLine, width, index } = csvHeader(lines, file, COLUMNS);
  return collectRequests(file, 'burstgpt', MOONCAKE_BLOCK_TOKENS, lines, headerLine + 1, (lineText, line): ParsedRequest => {
    const f = splitCsvRow(lineText, file, line);
    checkWidth(f, width, file, line);
    const site = { file, line };
    const arrival_ms = nonNegativeNumber(site, 'Timestamp', f[index.Timestamp]) * 1000;
    const input_tokens = integerAtLeast(site, 'Request tokens', f[index['Request tokens']], 1);
    const output_tokens = integerAtLeast(site, 'Response tokens', f[index['Response tokens']], 0);
    return { line, arrival_ms, input_tokens, output_tokens, hash_ids: [] };
  }, opts);
}
