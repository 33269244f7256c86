/** The outcome of one request of a serving run (one row of requests.csv). */
export type RequestStatus = 'served' | 'refused';

/**
 * Why a request was refused (backpressure):
 * - queue_full: the admission queue already held max-queue requests when it arrived
 * - queue_timeout: it waited max-queue-ms without HBM room being found for it
 * - exceeds_hbm: its input + output KV cannot fit in HBM even with nothing else there
 */
export type RefusalReason = 'queue_full' | 'queue_timeout' | 'exceeds_hbm';
export const REFUSAL_REASONS: readonly RefusalReason[] = ['queue_full', 'queue_timeout', 'exceeds_hbm'];

export interface RequestRecord {
  id: number;
  line: number;
  arrival_ms: number;
  status: RequestStatus;
  reason: RefusalReason | '';
  input_tokens: number;
  output_tokens: number;
  /** prefix-matched input tokens (all tiers) and per tier, in the run's tier order */
  prefix_hit_tokens: number;
  hit_tokens: number[];
  /** input tokens computed by prefill (at least 1, the last token, when all of the input hit) */
  prefill_tokens: number;
  /** arrival to admission */
  queue_ms: number;
  /** admission to the end of the promotion of its lower-tier prefix blocks into HBM */
  promote_ms: number;
  /** arrival to the first output token */
  ttft_ms: number;
  /** time between output tokens: mean and max over this request (NaN with fewer than 2 tokens) */
  tbt_mean_ms: number;
  tbt_max_ms: number;
  /** arrival to the last token */
  e2e_ms: number;
  finish_ms: number;
  slo_met: boolean;
}
