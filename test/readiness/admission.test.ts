import { describe, expect, it } from 'vitest';
import { admitFifo } from '../../studies/readiness/admission.js';
import { MIN_REQUESTS, judgeTsunami } from '../../studies/readiness/tsunami-check.js';

describe('FIFO admission with backpressure', () => {
  it('queues what does not fit and admits it when space frees (hand timeline)', () => {
    // pool 10: r0 (6) runs 0..5; r1 (6) does not fit beside it and blocks r2 (3) behind it (strict FIFO);
    // at 5 both are admitted (6 + 3 = 9) and finish at 10 and 8
    const r = admitFifo(
      [
        { id: 0, arrivalMs: 0, reserveBytes: 6, serviceMs: 5 },
        { id: 1, arrivalMs: 0, reserveBytes: 6, serviceMs: 5 },
        { id: 2, arrivalMs: 0, reserveBytes: 3, serviceMs: 3 },
      ],
      10,
    );
    expect(r.outcomes).toEqual([
      { id: 0, status: 'completed', admitMs: 0, finishMs: 5, waitMs: 0 },
      { id: 1, status: 'completed', admitMs: 5, finishMs: 10, waitMs: 5 },
      { id: 2, status: 'completed', admitMs: 5, finishMs: 8, waitMs: 5 },
    ]);
    expect(r.peakBytes).toBe(9);
    expect(r.maxConcurrent).toBe(2);
    expect(r.queued).toBe(2);
    expect(r.refused).toBe(0);
    expect(r.makespanMs).toBe(10);
  });

  it('refuses a request larger than the pool and serves the rest', () => {
    const r = admitFifo(
      [
        { id: 0, arrivalMs: 0, reserveBytes: 11, serviceMs: 1 },
        { id: 1, arrivalMs: 2, reserveBytes: 4, serviceMs: 1 },
      ],
      10,
    );
    expect(r.outcomes.map((o) => o.status)).toEqual(['refused', 'completed']);
    expect(r.outcomes[1]).toEqual({ id: 1, status: 'completed', admitMs: 2, finishMs: 3, waitMs: 0 });
    expect(r.refused).toBe(1);
  });

  it('never holds more than the pool, and serves every request that fits alone (random bursts)', () => {
    let x = 12345;
    const rnd = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let t = 0; t < 50; t++) {
      const reqs = Array.from({ length: 60 }, (_, id) => ({ id, arrivalMs: Math.floor(rnd() * 20), reserveBytes: 1 + Math.floor(rnd() * 10), serviceMs: 1 + rnd() * 5 }));
      const r = admitFifo(reqs, 10);
      expect(r.refused).toBe(0);
      expect(r.peakBytes).toBeLessThanOrEqual(10);
      // replay the admissions: bytes held at each admission instant stay within the pool
      for (const o of r.outcomes) {
        const held = r.outcomes.filter((p) => p.admitMs! <= o.admitMs! && p.finishMs! > o.admitMs!).reduce((s, p) => s + reqs[p.id].reserveBytes, 0);
        expect(held).toBeLessThanOrEqual(10);
        expect(o.admitMs!).toBeGreaterThanOrEqual(reqs[o.id].arrivalMs);
      }
    }
  });
});

describe('tsunami rule', () => {
  const ok = admitFifo(Array.from({ length: MIN_REQUESTS }, (_, id) => ({ id, arrivalMs: 0, reserveBytes: 4, serviceMs: 2 })), 10);

  it('passes 50 requests of 4 bytes in a pool of 10: two at a time, the last pair waits 48', () => {
    const v = judgeTsunami('p', MIN_REQUESTS, 10, ok, 'm');
    expect(v.pass).toBe(true);
    expect(v.details).toMatchObject({ queued_requests: 48, max_concurrent: 2, wait_ms_max: 48, makespan_ms: 50 });
  });

  it('fails with fewer than 50 requests, or a lost request', () => {
    const few = admitFifo(Array.from({ length: 49 }, (_, id) => ({ id, arrivalMs: 0, reserveBytes: 4, serviceMs: 2 })), 10);
    expect(judgeTsunami('p', 49, 10, few, 'm').pass).toBe(false);
    const lost = admitFifo([...Array.from({ length: 50 }, (_, id) => ({ id, arrivalMs: 0, reserveBytes: 4, serviceMs: 2 })), { id: 50, arrivalMs: 0, reserveBytes: 11, serviceMs: 1 }], 10);
    const v = judgeTsunami('p', 51, 10, lost, 'm');
    expect(v.pass).toBe(false);
    expect(v.readings.find((r) => r.name === 'refused (lost)')).toMatchObject({ value: 1, pass: false });
    expect(v.readings.find((r) => r.name === 'completed')).toMatchObject({ value: 50, pass: false });
  });
});

describe('admitFifo refuses what it cannot schedule', () => {
  it('names the request and field of a NaN or negative number', () => {
    expect(() => admitFifo([{ id: 3, arrivalMs: 0, reserveBytes: 1, serviceMs: NaN }], 10)).toThrow('admission: request 3: serviceMs NaN: expected a finite number >= 0');
    expect(() => admitFifo([{ id: 4, arrivalMs: -1, reserveBytes: 1, serviceMs: 1 }], 10)).toThrow('admission: request 4: arrivalMs -1');
    expect(() => admitFifo([], NaN)).toThrow('admission: pool of NaN bytes');
  });
});
