/**
 * The events of a run: one per timing mark of the plan, one per cross-stream fence of each stream
 * (numbered from 1), and the base both streams start from; with waitMarks, a before/after pair
 * around each of the memory stream's waits on compute, per step.
 */
import type { NativeBackend } from '../addon-types.js';
import type { EventSet } from '../timing/event-set.js';
import type { LoweredPlan } from './lowered-plan.js';

export class RunEvents {
  readonly marks: number[];
  readonly fences: number[][];
  readonly base: number;
  readonly waitPairs: [number, number][][];

  constructor(
    b: NativeBackend,
    readonly events: EventSet,
    p: Pick<LoweredPlan, 'marks' | 'fences'> & { steps: readonly unknown[] },
  ) {
    const ev = events.make;
    this.marks = Array.from({ length: p.marks }, ev);
    this.fences = [Array.from({ length: p.fences[0] + 1 }, ev), Array.from({ length: p.fences[1] + 1 }, ev)];
    this.base = ev();
    b.record('compute', this.base);
    b.record('memory', ev()); // nothing to wait on, but both streams start from here
    this.waitPairs = p.steps.map(() => []);
  }
}
