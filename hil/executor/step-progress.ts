/**
 * Progress of a run while it is in flight: which steps the compute stream has finished. A step is
 * done when the mark after its last projection has completed; the backend says so by timing it
 * (elapsedMs refuses an event that has not completed). Polled on a timer, on the host backend only
 * (there the steps take seconds; on a GPU the run is over before a poll would tell anything).
 */
import type { NativeBackend } from '../addon-types.js';
import type { LoweredPlan } from './lowered-plan.js';
import type { RunEvents } from './run-events.js';

/** `done` of `total` steps; label names what runs now */
export type StepProgress = (done: number, total: number, label?: string) => void;

export interface StepWatch {
  /** polls once more and reports what it finds */
  poll(): number;
  stop(): void;
}

/** the mark id after each step's last projection (-1: a step without layers) */
export function stepEndMarks(p: LoweredPlan): number[] {
  return p.steps.map((s) => (s.layers.length ? s.layers[s.layers.length - 1].done : -1));
}

function completed(b: NativeBackend, from: number, to: number): boolean {
  try {
    b.elapsedMs(from, to);
    return true;
  } catch {
    return false;
  }
}

export function watchSteps(b: NativeBackend, p: LoweredPlan, ev: RunEvents, report: StepProgress, intervalMs = 250): StepWatch {
  const ends = stepEndMarks(p);
  const total = ends.length;
  let done = 0;
  const poll = () => {
    while (done < total && (ends[done] < 0 || completed(b, ev.base, ev.marks[ends[done]]))) done++;
    report(done, total, done < total ? `step ${done + 1}/${total}` : 'timings');
    return done;
  };
  const timer = setInterval(poll, intervalMs);
  timer.unref?.();
  return { poll, stop: () => clearInterval(timer) };
}
