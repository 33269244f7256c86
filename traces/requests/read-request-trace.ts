/**
 * Read a request trace file. The format is taken from `format`, else from the file: `.jsonl`/`.json`
 * is Mooncake; a CSV whose header has `ContextTokens` is Azure, one with `Request tokens` is BurstGPT.
 */
import { readInputText } from '../input-file.js';
import { BUNDLED_TRACE_ARGS } from './bundled-traces.js';
import type { CollectOptions } from './collect-requests.js';
import { parseAzure } from './parse-azure.js';
import { parseBurstGpt } from './parse-burstgpt.js';
import { parseMooncake } from './parse-mooncake.js';
import { REQUEST_FORMATS, type RequestFormat, type RequestTrace } from './request.js';

export interface ReadRequestOptions extends CollectOptions {
  format?: RequestFormat;
}

export function detectRequestFormat(file: string, text: string): RequestFormat {
  if (/\.jsonl?$/i.test(file)) return 'mooncake';
  const header = text.slice(0, 4096).split('\n').find((l) => l.trim() !== '') ?? '';
  if (header.includes('ContextTokens')) return 'azure';
  if (header.includes('Request tokens')) return 'burstgpt';
  if (header.trimStart().startsWith('{')) return 'mooncake';
  throw new Error(
    `${file}: cannot tell the request-trace format (expected Mooncake .jsonl, or a CSV header with ` +
      `"ContextTokens" (Azure) or "Request tokens" (BurstGPT)); name it with format: ${REQUEST_FORMATS.join('|')}`,
  );
}

export function parseRequestTrace(text: string, file: string, opts: ReadRequestOptions = {}): RequestTrace {
  const format = opts.format ?? detectRequestFormat(file, text);
  switch (format) {
    case 'mooncake':
      return parseMooncake(text, file, opts);
    case 'azure':
      return parseAzure(text, file, opts);
    case 'burstgpt':
      return parseBurstGpt(text, file, opts);
    default:
      throw new Error(`${file}: unknown request-trace format "${String(format)}" (valid: ${REQUEST_FORMATS.join(', ')})`);
  }
}

export function readRequestTrace(file: string, opts: ReadRequestOptions = {}): RequestTrace {
  const text = readInputText(
    file,
    'the request trace',
    'a Mooncake .jsonl, Azure or BurstGPT .csv file',
    `bundled traces: ${BUNDLED_TRACE_ARGS.join(', ')}`,
  );
  return parseRequestTrace(text, file, opts);
}
