/** Knobs of a serving simulation, their defaults and their checks. */
import type { HardwareProfile } from '../sim/hardware/profile.js';
import type { ModelSpec } from '../sim/models/model.js';
import type { CachePolicyDefinition } from './cache-policy.js';
import type { ServingTier } from './serving-tiers.js';

export interface ServingOptions {
  /** most tokens one iteration processes (decode tokens + prefill chunk tokens) */
  maxBatchTokens: number;
  /** most requests running at once (each decodes at most one token per iteration) */
  maxRunning: number;
  /** most requests waiting for admission; one more is refused (backpressure) */
  maxQueue: number;
  /** a request waiting longer than this is refused (backpressure); Infinity = wait forever */
  maxQueueMs: number;
  /** arrival times are multiplied by this (0.5 = the same trace at twice the rate) */
  timeScale: number;
  /** SLO targets: a served request meets the SLO when TTFT <= ttftSloMs and its mean TBT <= tbtSloMs */
  ttftSloMs: number;
  tbtSloMs: number;
}

export const DEFAULT_SERVING_OPTIONS: Readonly<ServingOptions> = {
  maxBatchTokens: 8192,
  maxRunning: 256,
  maxQueue: 1024,
  maxQueueMs: 60_000,
  timeScale: 1,
  ttftSloMs: 2000,
  tbtSloMs: 100,
};

export interface ServingSetup {
  model: ModelSpec;
  hardware: HardwareProfile;
  tiers: ServingTier[];
  policy: CachePolicyDefinition;
  options: ServingOptions;
}

function positive(name: string, v: number, integer: boolean, allowInfinity: boolean): void {
  const ok = allowInfinity && v === Infinity ? true : Number.isFinite(v) && v > 0 && (!integer || Number.isInteger(v));
  if (!ok) throw new Error(`${name} must be a ${integer ? 'positive integer' : 'number > 0'}${allowInfinity ? ' or unbounded' : ''} (got ${v})`);
}

export function checkServingOptions(o: ServingOptions): void {
  positive('max-batch-tokens', o.maxBatchTokens, true, false);
  positive('max-running', o.maxRunning, true, false);
  if (!(o.maxQueue === Infinity || (Number.isInteger(o.maxQueue) && o.maxQueue >= 0))) {
    throw new Error(`max-queue must be an integer >= 0 or unbounded (got ${o.maxQueue})`);
  }
  if (!(o.maxQueueMs >= 0)) throw new Error(`max-queue-ms must be >= 0 or unbounded (got ${o.maxQueueMs})`);
  positive('time-scale', o.timeScale, false, false);
  positive('ttft-slo-ms', o.ttftSloMs, false, true);
  positive('tbt-slo-ms', o.tbtSloMs, false, true);
}
