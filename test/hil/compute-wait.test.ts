// The host's waits for the compute stream: timed into their own per-step field, inside the step's issue time.
import { describe, expect, it } from 'vitest';
import type { NativeBackend } from '../../hil/addon-types.js';
import { FileStepTimes } from '../../hil/executor/file-step-times.js';
import { OpIssuer, type IssuedPlan } from '../../hil/executor/issue-ops.js';
import type { LowOp } from '../../hil/executor/lowered-plan.js';

describe("the host's waits for the compute stream", () => {
  it('go into computeWaitMs of their step, and into its issue time', async () => {
    const recorded: string[] = [];
    const b = {
      kind: 'host',
      synchronize: async (s: string) => {
        recorded.push(`sync ${s}`);
        await new Promise((r) => setTimeout(r, 40));
      },
      record: (s: string, e: number) => recorded.push(`record ${s} ${e}`),
    } as unknown as NativeBackend;
    const wait: LowOp = { o: 'hostWaitCompute' };
    const mark = (id: number): LowOp => ({ o: 'mark', s: 0, id });
    const plan = { geometry: { kvHeads: 1, blockTokens: 16, headDim: 8, groupSize: 8 }, slotBytes: 64, arenaBytes: 0, steps: [{ ops: [mark(0)] }, { ops: [wait, mark(1)] }, { ops: [mark(2), wait, wait] }] } as unknown as IssuedPlan;
    const times = new FileStepTimes(3);
    const ev = { marks: [10, 11, 12] };
    const issuer = new OpIssuer(b, plan, {} as never, {} as never, {} as never, ev as never, times, { fileBatch: true, waitMarks: false });
    await issuer.issueAll();
    expect(recorded).toEqual(['record compute 10', 'sync compute', 'record compute 11', 'record compute 12', 'sync compute', 'sync compute']);
    expect(times.computeWaitMs[0]).toBe(0);
    // one wait of ~40 ms, then two (timers fire no earlier than asked, give or take a millisecond)
    expect(times.computeWaitMs[1]).toBeGreaterThanOrEqual(39);
    expect(times.computeWaitMs[2]).toBeGreaterThanOrEqual(78);
    for (const si of [1, 2]) expect(times.issueMs[si]).toBeGreaterThanOrEqual(times.computeWaitMs[si]);
  });
});
