/**
 * Stutter-free: the share of data movement hidden behind compute is above MIN_MASKING, read two ways:
 * - summary masking efficiency: 1 − stall / transfer time, as summary.json defines it;
 * - strict masking: 1 − (time some copy is in flight while the compute stream runs no kernel) /
 *   (time some copy is in flight), from the run's stream spans: every compute-stream gap under a
 *   transfer counts, whether or not the simulator booked it as a stall.
 */
import type { TraceSpan } from '../../sim/stream.js';
import type { CheckVerdict } from './verdict.js';

export const MIN_MASKING = 0.95;

type Interval = [number, number];

/** Sorted, merged union of intervals. */
export function unionOf(intervals: readonly Interval[]): Interval[] {
  const s = intervals.filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const out: Interval[] = [];
  for (const [a, b] of s) {
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

function lengthOf(u: readonly Interval[]): number {
  return u.reduce((t, [a, b]) => t + (b - a), 0);
}

/** Total length of a ∩ b for two merged unions. */
function overlapOf(a: readonly Interval[], b: readonly Interval[]): number {
  let i = 0;
  let j = 0;
  let t = 0;
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i][0], b[j][0]);
    const hi = Math.min(a[i][1], b[j][1]);
    if (hi > lo) t += hi - lo;
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return t;
}

export interface StrictMasking {
  /** time with at least one copy in flight, us */
  inFlightUs: number;
  /** of which the compute stream ran no kernel, us */
  exposedUs: number;
  /** 1 − exposed / in flight (1 when nothing was copied) */
  masking: number;
}

/** Strict masking from stream spans: copies (cat "copy", any stream) against compute-stream kernels. */
export function strictMasking(spans: readonly TraceSpan[]): StrictMasking {
  const copies = unionOf(spans.filter((s) => s.cat === 'copy').map((s) => [s.start, s.end] as Interval));
  const compute = unionOf(spans.filter((s) => s.stream === 'compute').map((s) => [s.start, s.end] as Interval));
  const inFlightUs = lengthOf(copies);
  const exposedUs = inFlightUs - overlapOf(copies, compute);
  return { inFlightUs, exposedUs, masking: inFlightUs > 0 ? 1 - exposedUs / inFlightUs : 1 };
}

export function judgeStutter(policy: string, summaryMasking: number, strict: StrictMasking, method: string): CheckVerdict {
  const readings = [
    { name: 'masking efficiency (summary.json: 1 - stall/transfer)', value: summaryMasking, criterion: `> ${MIN_MASKING}`, pass: summaryMasking > MIN_MASKING },
    { name: 'strict masking (compute idle while a copy is in flight)', value: strict.masking, criterion: `> ${MIN_MASKING}`, pass: strict.masking > MIN_MASKING },
  ];
  return {
    check: 'stutter',
    policy,
    pass: readings.every((r) => r.pass),
    readings,
    method,
    details: { copy_in_flight_us: strict.inFlightUs, compute_idle_under_copy_us: strict.exposedUs },
  };
}
