/**
 * Serving-level request traces: one arrival per request with its input and output lengths and,
 * where the trace has them, the hashes of its input's prefix blocks (equal hash = reusable KV).
 */
export type RequestFormat = 'mooncake' | 'azure' | 'burstgpt';
export const REQUEST_FORMATS: readonly RequestFormat[] = ['mooncake', 'azure', 'burstgpt'];

/** Tokens per prefix block in Mooncake traces. */
export const MOONCAKE_BLOCK_TOKENS = 512;

export interface ServingRequest {
  /** position in the trace after ordering by arrival (0-based) */
  id: number;
  /** line of the source file it came from (1-based) */
  line: number;
  /** arrival time in milliseconds from the start of the trace */
  arrival_ms: number;
  input_tokens: number;
  output_tokens: number;
  /** hashes of the input's prefix blocks, in order (block i covers tokens [i*B, (i+1)*B)); empty = unknown */
  hash_ids: readonly number[];
}

export interface SkippedLine {
  line: number;
  message: string;
}

export interface RequestTrace {
  file: string;
  format: RequestFormat;
  /** tokens per prefix block (B above) */
  block_tokens: number;
  requests: ServingRequest[];
  /** malformed lines skipped (only with skipMalformed); the first few are listed in skipped_lines */
  skipped: number;
  skipped_lines: SkippedLine[];
  /** true when the file's arrivals were out of order and were sorted (stable) */
  reordered: boolean;
}
