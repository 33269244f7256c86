/**
 * Needle-in-a-haystack: with an HBM budget of half the KV (the KV fills HBM twice over), the needle
 * block, ignored until its active window, must be available in every retrieval layer throughout the
 * window and held at FP16 in every retrieval layer from REACTION_STEPS steps after it turns hot (a
 * policy sees attention only after a step ran, so the first hot step cannot have been anticipated).
 * The attention recall at the window's steps is reported beside it.
 */
import type { StepRow } from '../../sim/metrics/summary.js';
import type { CheckVerdict } from './verdict.js';

export const REACTION_STEPS = 1;
export const NEEDLE_BUDGET = '50%';

export interface NeedleWindow {
  fromStep: number;
  steps: number;
}

export function judgeNeedle(policy: string, window: NeedleWindow, rows: readonly StepRow[], method: string): CheckVerdict {
  const active = rows.filter((r) => r.step >= window.fromStep && r.step < window.fromStep + window.steps);
  const afterReaction = active.filter((r) => r.step >= window.fromStep + REACTION_STEPS);
  const unavailable = active.filter((r) => (r.needle_unavailable ?? 0) > 0).length;
  const degraded = afterReaction.filter((r) => (r.needle_degraded ?? 0) > 0 || (r.needle_unavailable ?? 0) > 0).length;
  const degradedAll = active.filter((r) => (r.needle_degraded ?? 0) > 0).length;
  const recall = active.length ? active.reduce((t, r) => t + r.recall, 0) / active.length : null;
  const recallMin = active.length ? Math.min(...active.map((r) => r.recall_min)) : null;
  const readings = [
    { name: 'active steps in the run', value: active.length, criterion: `= ${window.steps}`, pass: active.length === window.steps && window.steps > REACTION_STEPS },
    { name: 'active steps with the needle unavailable', value: unavailable, criterion: '= 0', pass: unavailable === 0 },
    { name: `active steps after the first ${REACTION_STEPS} with the needle below FP16`, value: degraded, criterion: '= 0', pass: degraded === 0 },
    { name: 'active steps with the needle below FP16, the first included', value: degradedAll, criterion: 'reported', pass: true },
    { name: 'attention recall over the active steps (mean)', value: recall, criterion: 'reported', pass: true },
    { name: 'attention recall over the active steps (lowest layer)', value: recallMin, criterion: 'reported', pass: true },
  ];
  return {
    check: 'needle',
    policy,
    pass: readings.every((r) => r.pass),
    readings,
    method,
    details: {
      active_from_step: window.fromStep,
      active_steps: window.steps,
      needle_bits_min_per_active_step: active.map((r) => r.needle_bits_min ?? null),
    },
  };
}
