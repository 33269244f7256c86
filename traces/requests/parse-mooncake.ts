/**
 * Mooncake FAST'25 JSONL: one object per line with `timestamp` (ms), `input_length`,
 * `output_length` and `hash_ids` (512-token prefix blocks). Other fields are ignored.
 */
import { collectRequests, splitLines, type CollectOptions, type ParsedRequest } from './collect-requests.js';
import { blockHashes, integerAtLeast, nonNegativeNumber } from './field-parsers.js';
import { MOONCAKE_BLOCK_TOKENS, type RequestTrace } from './request.js';
import { TraceFormatError } from './trace-format-error.js';

export function parseMooncake(text: string, file: string, opts: CollectOptions = {}): RequestTrace {
  const bt = MOONCAKE_BLOCK_TOKENS;
  return collectRequests(file, 'mooncake', bt, splitLines(text), 1, (lineText, line): ParsedRequest => {
    let obj: unknown;
    try {
      obj = JSON.parse(lineText);
    } catch (e) {
      throw new TraceFormatError(file, line, '', `invalid JSON (${(e as Error).message})`);
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
      throw new TraceFormatError(file, line, '', 'expected a JSON object');
    }
    const o = obj as Record<string, unknown>;
    const site = { file, line };
    const arrival_ms = nonNegativeNumber(site, 'timestamp', o.timestamp);
    const input_tokens = integerAtLeast(site, 'input_length', o.input_length, 1);
    const output_tokens = integerAtLeast(site, 'output_length', o.output_length, 0);
    const hash_ids = blockHashes(site, 'hash_ids', o.hash_ids, input_tokens, bt);
    return { line, arrival_ms, input_tokens, output_tokens, hash_ids };
  }, opts);
}
