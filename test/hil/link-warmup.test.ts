// The link warm-up before the calibration's copy benchmarks: round trips until the time has passed,
// the last one's rates reported; a bad duration is refused before anything is allocated.
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { warmLink } from '../../hil/timing/link-warmup.js';
import { tmpdir } from 'node:os';
import type { NativeBackend } from '../../hil/addon-types.js';
import { backendAvailability } from './availability.js';
import { makeHilFixture } from './hil-fixtures.js';

const host = backendAvailability('host');

describe('link warm-up on a failing backend', () => {
  // a backend that counts what is allocated and fails where told
  const fake = (failAt: 'device' | 'copy') => {
    const live = new Set<string>();
    let events = 0;
    let syncs = 0;
    const b = {
      alloc: (kind: string) => {
        if (failAt === 'device' && kind === 'device') throw new Error('out of memory');
        live.add(kind);
        return kind === 'pinned' ? 1 : 2;
      },
      free: (x: number) => live.delete(x === 1 ? 'pinned' : 'device'),
      createEvent: () => ++events,
      destroyEvent: () => events--,
      record: () => {},
      copy: () => {
        if (failAt === 'copy') throw new Error('copy failed');
      },
      synchronize: async () => {
        syncs++;
      },
      elapsedMs: () => 1,
    } as unknown as NativeBackend;
    return { b, live, events: () => events, syncs: () => syncs };
  };
  it('frees what it allocated when an allocation fails', async () => {
    const f = fake('device');
    await expect(warmLink(f.b, 0)).rejects.toThrow('out of memory');
    expect([...f.live]).toEqual([]);
    expect(f.events()).toBe(0);
  });
  it('waits for queued copies before freeing when a copy fails', async () => {
    const f = fake('copy');
    await expect(warmLink(f.b, 0)).rejects.toThrow('copy failed');
    expect(f.syncs()).toBe(1);
    expect([...f.live]).toEqual([]);
    expect(f.events()).toBe(0);
  });
});

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

  it("a run with linkCheckMs (hostProbe) reports the link's rate (the host's issue pace) after its set-up; without, nothing; a bad duration is reported, not thrown", async () => {
    const { openBackend } = await import('../../hil/backend.js');
    const { recordAndLower } = await import('../../hil/executor/hil-run.js');
    const { runPlan } = await import('../../hil/executor/run-plan.js');
    const { BlockData } = await import('../../hil/executor/block-data.js');
    const { blockBytes } = await import('../../hil/kv-format.js');
    // (the small HIL model and trace: the run's set-up writes every block of the prompt)
    const fx = makeHilFixture(256, 4);
    const { sim, lowered } = recordAndLower({ trace: fx.trace, model: fx.model, group_size: 64, policy: 'lru-offload', hardware: 'h100-pcie5', hbm_budget: '20%' }, { backend: 'host' });
    const b = openBackend('host');
    try {
      const run = (linkCheckMs?: number, hostProbe?: boolean) =>
        runPlan(b, { ...lowered, steps: lowered.steps.slice(0, 2) }, sim.resolved.model, new BlockData(1, blockBytes(lowered.geometry, 'fp16') / 2), { nvmeDir: tmpdir(), directIo: false, ioThreads: 4, maxWeightBytes: 64 << 20, traceSteps: 0, verify: false, packThreads: 0, ...(linkCheckMs !== undefined ? { linkCheckMs } : {}), ...(hostProbe ? { hostProbe } : {}) });
      const r = await run(5);
      expect(r.linkBefore && 'h2d_GBps' in r.linkBefore && r.linkBefore.h2d_GBps > 0 && r.linkBefore.d2h_GBps > 0).toBe(true);
      expect(r.hostBefore).toBeUndefined();
      const probed = await run(undefined, true);
      expect(probed.hostBefore && 'copy_us' in probed.hostBefore && probed.hostBefore.copy_us > 0 && probed.hostBefore.lists_us.length === 15).toBe(true);
      expect(probed.linkBefore).toBeUndefined();
      expect((await run()).linkBefore).toBeUndefined();
      expect((await run(-1)).linkBefore).toEqual({ error: 'link warm-up: ms must be a number >= 0 (got -1)' });
    } finally {
      b.close();
      rmSync(fx.dir, { recursive: true, force: true });
    }
  });
});
