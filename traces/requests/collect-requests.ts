/**
 * The loop every request-trace reader shares: parse each line, stop at the first malformed one
 * (or, with skipMalformed, count it and go on), order by arrival (stable) and number the requests.
 */
import type { RequestFormat, RequestTrace, ServingRequest, SkippedLine } from './request.js';
import { TraceFormatError } from './trace-format-error.js';

/** What a line parser returns: a request without its id (or null for a line to ignore). */
export type ParsedRequest = Omit<ServingRequest, 'id'>;
export type LineParser = (text: string, line: number) => ParsedRequest | null;

export interface CollectOptions {
  /** count and skip malformed lines instead of failing on the first one */
  skipMalformed?: boolean;
}

/** How many skipped lines are listed by line number and message (all are counted). */
export const SKIPPED_LINES_LISTED = 20;

export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) if (lines[i].endsWith('\r')) lines[i] = lines[i].slice(0, -1);
  return lines;
}

export function collectRequests(
  file: string,
  format: RequestFormat,
  blockTokens: number,
  lines: readonly string[],
  firstLine: number,
  parse: LineParser,
  opts: CollectOptions = {},
): RequestTrace {
  const parsed: ParsedRequest[] = [];
  const skippedLines: SkippedLine[] = [];
  let skipped = 0;
  for (let i = firstLine - 1; i < lines.length; i++) {
    const text = lines[i];
    if (text.trim() === '') continue;
    try {
      const r = parse(text, i + 1);
      if (r) parsed.push(r);
    } catch (e) {
      if (!(e instanceof TraceFormatError) || !opts.skipMalformed) throw e;
      skipped++;
      if (skippedLines.length < SKIPPED_LINES_LISTED) skippedLines.push({ line: e.line, message: e.message });
    }
  }
  if (parsed.length === 0) {
    const why = skipped > 0 ? ` (${skipped} malformed line${skipped === 1 ? '' : 's'} skipped)` : '';
    throw new Error(`${file}: no requests in the trace${why}`);
  }
  let reordered = false;
  for (let i = 1; i < parsed.length; i++) {
    if (parsed[i].arrival_ms < parsed[i - 1].arrival_ms) {
      reordered = true;
      break;
    }
  }
  if (reordered) parsed.sort((a, b) => a.arrival_ms - b.arrival_ms || a.line - b.line);
  const requests = parsed.map((r, id) => ({ id, ...r }));
  return { file, format, block_tokens: blockTokens, requests, skipped, skipped_lines: skippedLines, reordered };
}
