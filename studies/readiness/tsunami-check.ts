/**
 * Memory tsunami: at least MIN_REQUESTS long requests arrive at once against one HBM; requests whose
 * HBM does not fit wait (backpressure), none is refused, every one completes, and the HBM in use
 * never exceeds the pool. The admission rule (admission.ts) never admits past the pool and refuses
 * only a request that cannot fit alone, so the verdict fails only when one request's HBM exceeds the
 * pool; the queue waits in the details are what a policy changes.
 */
import type { AdmissionResult } from './admission.js';
import type { CheckVerdict } from './verdict.js';

export const MIN_REQUESTS = 50;

export function judgeTsunami(policy: string, requests: number, poolBytes: number, r: AdmissionResult, method: string): CheckVerdict {
  const completed = r.outcomes.filter((o) => o.status === 'completed').length;
  const waits = r.outcomes.map((o) => o.waitMs).filter((w): w is number => w !== null);
  const readings = [
    { name: 'requests', value: requests, criterion: `>= ${MIN_REQUESTS}`, pass: requests >= MIN_REQUESTS },
    { name: 'completed', value: completed, criterion: `= requests (${requests})`, pass: completed === requests },
    { name: 'refused (lost)', value: r.refused, criterion: '= 0', pass: r.refused === 0 },
    { name: 'peak HBM reserved, bytes', value: r.peakBytes, criterion: `<= pool (${poolBytes})`, pass: r.peakBytes <= poolBytes },
  ];
  return {
    check: 'tsunami',
    policy,
    pass: readings.every((x) => x.pass),
    readings,
    method,
    details: {
      pool_bytes: poolBytes,
      queued_requests: r.queued,
      max_concurrent: r.maxConcurrent,
      wait_ms_max: waits.length ? Math.max(...waits) : null,
      wait_ms_mean: waits.length ? waits.reduce((a, b) => a + b, 0) / waits.length : null,
      makespan_ms: r.makespanMs,
    },
  };
}
