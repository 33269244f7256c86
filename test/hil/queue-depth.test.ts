// The launch-queue depth: from the host's clock after each launch of GEMVs that outlast their launch,
// how many launches the host got ahead of the GPU (hand-made clocks), and the calibration's field.
import { describe, expect, it } from 'vitest';
import { queueDepthFrom, type QueueDepthResult } from '../../hil/bench/queue-depth-bench.js';
import { applyLaunchQueue } from '../../hil/calibrate/calibrate.js';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { backendAvailability } from './availability.js';

const cuda = backendAvailability('cuda');

/** the host clock (us) after each of n launches of `launchUs` each, GEMVs of `g` us, a queue of q */
function clock(n: number, q: number, g: number, launchUs: number): number[] {
  const at: number[] = [];
  let t = 0;
  for (let i = 1; i <= n; i++) {
    t += launchUs;
    // launch i needs launch i - q's GEMV to have ended; the first GEMV starts when it is launched (at[0])
    if (i > q) t = Math.max(t, at[0] + (i - q) * g);
    at.push(t);
  }
  return at;
}

describe('the launch queue depth', () => {
  it('reads the depth off a clock held back by the queue', () => {
    // 4096 launches of 2 us, GEMVs of 45 us, a queue of 1000: launch i (i > 1000) returns at 2 + (i - 1000) 45
    const at = clock(4096, 1000, 45, 2);
    const r = queueDepthFrom(at, 45);
    // i - (at[i - 1] - at[0]) / 45 = i - (i - 1000) = 1000 over the second half
    expect(r.ops).toBeCloseTo(1000, 9);
    expect(r.launch_us).toBeCloseTo(2, 12);
    // a queue larger than half the launches: the second half is not held back evenly, and a queue that
    // never fills gives no estimate
    expect(queueDepthFrom(clock(4096, 5000, 45, 2), 45).ops).toBeNaN();
    expect(queueDepthFrom(at, 0).ops).toBeNaN();
    expect(queueDepthFrom([0, 1, 2], 45).ops).toBeNaN();
    // back to back the GEMVs run at 46 us, not the 45 one took alone: the depth from the clock's own period
    expect(queueDepthFrom(clock(8192, 1000, 46, 2), 45).ops).toBeCloseTo(1000, 9);
  });

  it('the calibration writes the rounded median as gpu.launch_queue_ops, and nothing without an estimate', () => {
    const p = loadHardware('h100-pcie5');
    const q: QueueDepthResult = { ops: 1023.6, launches: 8192, gemv_us: 45.2, trials: [{ ops: 1023.6, launch_us: 2.1 }, { ops: Number.NaN, launch_us: 2 }] };
    applyLaunchQueue(p, q, 'test');
    expect(p.gpu.launch_queue_ops).toBe(1024);
    expect(p.sources['gpu.launch_queue_ops']).toContain('8192 GEMVs of 45.2 us');
    expect(p.sources['gpu.launch_queue_ops']).toContain('trials 1024, none');
    // it acts on the host clock: a profile without issue costs is refused, naming the fields
    expect(() => validateProfile(p, 'p.json')).toThrow("p.json: gpu.launch_queue_ops needs the host clock: set one of gpu.issue_copy_us, gpu.issue_record_us, gpu.issue_kernel_us, gpu.issue_convert_us, gpu.issue_attention_us above 0, or leave launch_queue_ops out");
    p.gpu.issue_copy_us = 3;
    expect(() => validateProfile(p, 'p.json')).not.toThrow();
    const none = loadHardware('h100-pcie5');
    applyLaunchQueue(none, { ...q, ops: Number.NaN }, 'test');
    applyLaunchQueue(none, undefined, 'test');
    expect(none.gpu.launch_queue_ops).toBeUndefined();
  });
});

describe.skipIf(!cuda.available)(`launch queue depth, cuda backend${cuda.available ? '' : ` (skipped: ${cuda.reason})`}`, () => {
  it('the host gets a finite number of launches ahead of the GPU, and each trial agrees', async () => {
    const { openBackend } = await import('../../hil/backend.js');
    const { benchQueueDepth } = await import('../../hil/bench/queue-depth-bench.js');
    const b = openBackend('cuda');
    try {
      const r = await benchQueueDepth(b, { launches: 8192, trials: 2 });
      expect(r.gemv_us).toBeGreaterThan(5);
      expect(r.ops).toBeGreaterThanOrEqual(16);
      expect(r.ops).toBeLessThan(4096);
      for (const t of r.trials) {
        expect(Math.abs(t.ops - r.ops) / r.ops).toBeLessThan(0.1);
        expect(t.launch_us).toBeLessThan(r.gemv_us);
      }
      await expect(benchQueueDepth(b, { launches: 4 })).rejects.toThrow('queue depth bench: launches must be an integer >= 8 (got 4)');
    } finally {
      b.close();
    }
  });
});
