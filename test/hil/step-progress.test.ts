// Step progress of a HIL run in flight: a step counts as done once the mark after its last
// projection has completed (elapsedMs answers), in order, never past a step still running.
import { describe, expect, it } from 'vitest';
import type { NativeBackend } from '../../hil/addon-types.js';
import type { LoweredPlan, LowStep } from '../../hil/executor/lowered-plan.js';
import type { RunEvents } from '../../hil/executor/run-events.js';
import { stepEndMarks, watchSteps } from '../../hil/executor/step-progress.js';

const layer = (done: number) => ({ layer: 0, pre: done - 3, ready: done - 2, attn: done - 1, done });
const step = (i: number, dones: number[]): LowStep => ({ step: i, contextTokens: 16, ops: [], layers: dones.map(layer), memSpans: [], bytes: {} });

describe('step progress', () => {
  // step 0 ends at mark 7, step 1 has no layers, step 2 ends at mark 15
  const plan = { steps: [step(0, [3, 7]), step(1, []), step(2, [11, 15])] } as unknown as LoweredPlan;
  const ev = { base: 100, marks: Array.from({ length: 16 }, (_, i) => 200 + i) } as unknown as RunEvents;

  it('takes each step\'s last layer mark as its end', () => {
    expect(stepEndMarks(plan)).toEqual([7, -1, 15]);
  });

  it('counts the steps whose end mark completed, in order, and reports each poll', () => {
    const complete = new Set<number>();
    const b = {
      elapsedMs: (from: number, to: number) => {
        if (from !== 100 || !complete.has(to)) throw new Error('elapsedMs: event not completed (synchronize first)');
        return 1;
      },
    } as unknown as NativeBackend;
    const seen: [number, number, string | undefined][] = [];
    const w = watchSteps(b, plan, ev, (d, n, label) => seen.push([d, n, label]), 60_000);
    try {
      expect(w.poll()).toBe(0);
      complete.add(215); // step 2's end alone: step 0 is still running
      expect(w.poll()).toBe(0);
      complete.add(207); // step 0 done; step 1 has no layers; step 2 done
      expect(w.poll()).toBe(3);
    } finally {
      w.stop();
    }
    expect(seen).toEqual([
      [0, 3, 'step 1/3'],
      [0, 3, 'step 1/3'],
      [3, 3, 'timings'],
    ]);
  });
});
