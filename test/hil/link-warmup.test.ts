// The link warm-up before the calibration's copy benchmarks: round trips until the time has passed,
// the last one's rates reported; a bad duration is refused before anything is allocated.
import { describe, expect, it } from 'vitest';
import { warmLink } from '../../hil/timing/link-warmup.js';
import { backendAvailability } from './availability.js';

const host = backendAvailability('host');

describe.skipIf(!host.available)(`link warm-up, host backend${host.available ? '' : ` (skipped: ${host.reason})`}`, () => {
  it('copies both ways until the time has passed and reports the last round trip', async () => {
    const { openBackend } = await import('../../hil/backend.js');
    const b = openBackend('host');
    try {
      const t0 = performance.now();
      const w = await warmLink(b, 30);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(30);
      expect(w.ms).toBeGreaterThanOrEqual(30);
      expect(w.rounds).toBeGreaterThanOrEqual(1);
      expect(w.h2d_GBps).toBeGreaterThan(0);
      expect(w.d2h_GBps).toBeGreaterThan(0);
      // no time asked: one round trip
      expect((await warmLink(b, 0)).rounds).toBe(1);
      for (const ms of [-1, Number.NaN, Infinity]) await expect(warmLink(b, ms)).rejects.toThrow(`link warm-up: ms must be a number >= 0 (got ${ms})`);
    } finally {
      b.close();
    }
  });
});
