// The gate that keeps the host's launch time out of timed trials (hil/bench/gate.ts): its sizing by
// hand, and on the host backend that every trial is timed from the gate's end event, the gate's
// bookkeeping counts every trial, and bad sizes are refused.
import { describe, expect, it } from 'vitest';
import { openBackend } from '../../hil/backend.js';
import { ComputeGate, gateReps, MAX_GATE, timeOpGated } from '../../hil/bench/gate.js';
import { backendAvailability } from './availability.js';

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
