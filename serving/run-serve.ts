/**
 * One `kvtier serve` run: read the request trace, resolve model, hardware, tiers and cache policy,
 * simulate, and summarize. Everything a run needs comes in through ServeConfig.
 */
import { basename } from 'node:path';
import type { ReadRequestOptions } from '../traces/requests/read-request-trace.js';
import { readRequestTrace } from '../traces/requests/read-request-trace.js';
import type { RequestTrace } from '../traces/requests/request.js';
import { resolveRequestsArg } from '../traces/requests/bundled-traces.js';
import { loadHardware } from '../sim/hardware/load-profile.js';
import { loadModel } from '../sim/models/load-model.js';
import { getCachePolicy } from './cache-policy-registry.js';
import { theoreticalPrefixHitRatio } from './prefix-replay.js';
import type { RequestRecord } from './request-record.js';
import { summarizeServing, type ServeSummary } from './serve-summary.js';
import { DEFAULT_SERVING_OPTIONS, type ServingOptions } from './serving-config.js';
import { simulateServing, type ServingRunResult } from './serving-sim.js';
import { resolveServingTiers, type ServingTierOptions } from './serving-tiers.js';

export interface ServeConfig extends ServingTierOptions, ReadRequestOptions {
  /** a request-trace file, or mooncake:conversation / mooncake:synthetic */
  requests: string;
  /** replay only the first N requests */
  limit?: number;
  model: string;
  hardware: string;
  cache: string;
  options?: Partial<ServingOptions>;
}

export interface ServeResult {
  trace: RequestTrace;
  summary: ServeSummary;
  records: RequestRecord[];
  run: ServingRunResult;
}

/** `onProgress`: requests ended (served or refused) of all, as the simulation goes. */
export function runServe(config: ServeConfig, onProgress?: (done: number, total: number) => void): ServeResult {
  const policy = getCachePolicy(config.cache);
  const model = loadModel(config.model);
  const hardware = loadHardware(config.hardware);
  const tiers = resolveServingTiers(hardware, model, config);
  const options: ServingOptions = { ...DEFAULT_SERVING_OPTIONS, ...config.options };
  const trace = readRequestTrace(resolveRequestsArg(config.requests), config);
  if (config.limit !== undefined) {
    if (!(Number.isInteger(config.limit) && config.limit > 0)) throw new Error(`limit must be a positive integer (got ${config.limit})`);
    trace.requests = trace.requests.slice(0, config.limit);
  }
  const run = simulateServing(trace.requests, trace.block_tokens, { model, hardware, tiers, policy, options }, { onProgress });
  const summary = summarizeServing(run, {
    trace: basename(trace.file),
    traceFormat: trace.format,
    skippedLines: trace.skipped,
    model: model.name,
    hardware: hardware.name,
    policy: policy.name,
    options,
    theoreticalHitRatio: theoreticalPrefixHitRatio(trace.requests, trace.block_tokens),
  });
  return { trace, summary, records: run.records, run };
}
