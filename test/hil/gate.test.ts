// The gate that keeps the host's launch time out of timed trials (hil/bench/gate.ts): its sizing by
// hand; on a scripted machine (host clock and device timeline by hand) that a trial is timed from the
// gate's end, how many trials held, and that the gate keeps its size when its GEMVs launch slowly;
// on the host backend the same against real streams; bad input refused.
import { describe, expect, it } from 'vitest';
import { openBackend } from '../../hil/backend.js';
import { ComputeGate, gateReps, MAX_GATE, timeOpGated } from '../../hil/bench/gate.js';
import { backendAvailability } from './availability.js';
import { ScriptedGpu } from './scripted-gpu.js';

const host = backendAvailability('host');

describe('gate sizing', () => {
  it('covers the work with margin from what each GEMV gains over its launch', () => {
    expect(gateReps(500, 45, 5)).toBe(20); // (750 + 20) / 40 = 19.25
    expect(gateReps(100, 45, 0)).toBe(4); // 170 / 45 = 3.78
    expect(gateReps(0, 1e5, 0)).toBe(1);
  });
  it('counts a GEMV that launches about as slowly as it runs as a quarter of its time, not as nothing', () => {
    expect(gateReps(100, 40, 39)).toBe(17); // 170 / max(1, 10) = 17
    expect(gateReps(100, 40, 80)).toBe(17);
  });
  it('never queues more than MAX_GATE GEMVs, whatever the work', () => {
    expect(gateReps(1e9, 45, 5)).toBe(MAX_GATE);
    expect(MAX_GATE).toBeLessThan(1024); // inside the launch queue
  });
});

describe('gate on a scripted machine', () => {
  it('times the trial from the gate end: the op alone, every trial held', async () => {
    // GEMV 45 us, its launch 5 us; the trial: 300 us to queue, 50 us of device time for 2 ops
    const m = new ScriptedGpu(0.045, 0.005);
    const gate = await ComputeGate.open(m.asBackend(), 64, () => m.host);
    const r = await timeOpGated(m.asBackend(), gate, 7, 2, () => m.op(0.3, 0.05));
    gate.free();
    expect(r.trials).toBe(7);
    expect(r.held).toBe(7);
    expect(r.ms).toBeCloseTo(0.025, 9); // 50 us / 2 ops: none of the host's 300 us
    // after the first warm-up trial the kind's 300 us are known: (1.5 * 300 + 20) / (45 - 5) -> 12 GEMVs
    expect(m.gates.slice(-7)).toEqual([12, 12, 12, 12, 12, 12, 12]);
    expect(r.gateMs).toBeCloseTo(0.005 + 12 * 0.045, 9); // from g0: the first launch, then 12 GEMVs back to back
  });
  it('does not grow when the GEMVs launch about as slowly as they run', async () => {
    // launch 44 us, GEMV 45 us: the gate cannot outrun the host, but it stays the same size
    const m = new ScriptedGpu(0.045, 0.044);
    const gate = await ComputeGate.open(m.asBackend(), 64, () => m.host);
    const r = await timeOpGated(m.asBackend(), gate, 50, 1, () => m.op(0.3, 0.05));
    gate.free();
    // each GEMV counts as a quarter of its time as learned from the gate, (44 + 41 * 45) / 41 = 46.07 us:
    // (1.5 * 300 + 20) / 11.52 -> 41 GEMVs in every trial (sized from the whole enqueue time, the gate grew)
    expect(new Set(m.gates.slice(-50))).toEqual(new Set([41]));
    expect(r.held).toBe(0); // 41 GEMVs end at 44 + 41 * 45 = 1889 us, the host queues until 41 * 44 + 300 = 2104 us
  });
  it('refuses a release without a hold, a second hold, and trials or repeat of 0', async () => {
    const m = new ScriptedGpu(0.045, 0.005);
    const gate = await ComputeGate.open(m.asBackend(), 64, () => m.host);
    await expect(gate.release()).rejects.toThrow(/release\(\) without a hold\(\)/);
    gate.hold('a');
    expect(() => gate.hold('b')).toThrow(/hold\("b"\) while the trial "a" is not released/);
    await gate.release();
    await expect(timeOpGated(m.asBackend(), gate, 0, 1, () => {})).rejects.toThrow(/trials: expected a positive integer, got 0/);
    await expect(timeOpGated(m.asBackend(), gate, 3, 0, () => {})).rejects.toThrow(/repeat: expected a positive integer, got 0/);
    gate.free();
  });
});

describe.skipIf(!host.available)(`gate on the host backend${host.available ? '' : ` (skipped: ${host.reason})`}`, () => {
  it('times every trial from the gate end and reports how many held', async () => {
    const b = openBackend('host');
    const gate = await ComputeGate.open(b, 2048); // 16 MiB of weights: milliseconds per host GEMV
    try {
      const n = 4096;
      const src = b.alloc('device', n);
      const dst = b.alloc('device', n);
      try {
        const r = await timeOpGated(b, gate, 5, 3, () => b.copy('compute', dst, 0, src, 0, n, 3));
        expect(r.trials).toBe(5);
        expect(r.held).toBeGreaterThanOrEqual(0);
        expect(r.held).toBeLessThanOrEqual(5);
        expect(r.ms).toBeGreaterThanOrEqual(0);
        // a 4 KiB copy takes far less than the gate's GEMVs: the time starts where the gate ends
        expect(r.ms).toBeLessThan(r.gateMs / 10);
        expect(gate.repsFor('op')).toBeGreaterThanOrEqual(1);
        expect(gate.repsFor('op')).toBeLessThanOrEqual(MAX_GATE);
      } finally {
        b.free(src);
        b.free(dst);
      }
    } finally {
      gate.free();
      b.close();
    }
  });
  it('refuses a gate of no rows', async () => {
    const b = openBackend('host');
    try {
      await expect(ComputeGate.open(b, 0)).rejects.toThrow(/gate rows: expected a positive integer, got 0/);
    } finally {
      b.close();
    }
  });
});
