/**
 * The driver's demote and promote: each check refuses with its own message and changes nothing, in
 * the order the checks are made; demotions that alternate tier names land in the tier named each time
 * (the index of the name given last is kept); the kept and counted effects of accepted moves.
 */
import { describe, expect, it } from 'vitest';
import { KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver } from '../../sim/replay-driver.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import type { Actions, Policy, PolicyView } from '../../policies/policy.js';
import { denseSteps, tinyHardware, tinyHeader, tinyModel } from '../helpers/tiny.js';

function replay(fn: (v: PolicyView, a: Actions, cache: KVCache) => void, hbmBlocks = 10, dramBlocks = 1000) {
  const h = tinyHeader(16, 3);
  const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
  const maxBlocks = trace[trace.length - 1].layers[0].nBlocks;
  const cache = new KVCache(tinyModel, 4, 2, maxBlocks, [
    { name: 'hbm', capacityBytes: 2 * 64 * hbmBlocks },
    { name: 'dram', capacityBytes: 64 * dramBlocks },
    { name: 'nvme', capacityBytes: 1e9 },
  ]);
  const policy: Policy = { name: 'scripted', decide: (v, a) => fn(v, a, cache), observe: () => undefined };
  const driver = new ReplayDriver(h, cache, policy, new SimExecutor(tinyHardware(), tinyModel, { traceSteps: 0 }), hbmBlocks);
  driver.run(trace, () => undefined);
  cache.audit();
  return { driver, cache };
}

describe('ReplayDriver demote and promote', () => {
  it('refuse with the first failing check, in order, and change nothing', () => {
    const seen: string[] = [];
    const { driver, cache } = replay((v, a, c) => {
      if (v.step !== 0 || v.layer !== 0) return;
      const before = [...c.tier];
      a.pin(0, 2);
      expect(a.demote(0, 2, 'dram', 16)).toBe(false); // pinned
      expect(a.demote(0, 2, 'tape', 5)).toBe(false); // unknown tier, before the precision
      expect(a.demote(0, 1, 'dram', 5)).toBe(false); // precision
      expect(a.demote(0, 1, 'dram', 8.5)).toBe(false);
      expect(a.demote(0, 1, 'dram', NaN)).toBe(false);
      expect(a.demote(0, 1, 'hbm', 16)).toBe(false); // not below
      expect(a.demote(0, 1, 'hbm', 8)).toBe(true); // requantized in place
      expect(a.demote(0, 1, 'hbm', 8)).toBe(false); // not below any more
      expect(a.promote(0, 3)).toBe(false); // already in HBM at its bits
      expect(a.promote(0, 1, 4)).toBe(false); // narrower than it is
      expect(a.promote(0, 1, 7)).toBe(false); // precision
      expect(a.promote(0, 1)).toBe(false); // in HBM at 8 bits: promote at its own bits refused
      expect(a.promote(0, 1, 16)).toBe(true); // back to 16 bits
      expect(a.demote(0, 99, 'dram', 16)).toBe(false); // no such block
      expect(a.promote(1.5, 0)).toBe(false);
      c.audit();
      const after = [...c.tier];
      expect(after).toEqual(before);
      seen.push('done');
    });
    expect(seen).toEqual(['done']);
    const ex = driver.counters.refusalExamples;
    expect(driver.counters.refused).toEqual({ demote: 8, promote: 5 });
    expect(ex.demote).toBe('step 0: layer 0 block 2 is pinned');
    expect(ex.promote).toBe('step 0: layer 0 block 3 is already in hbm');
    expect(cache.bitsOf(0, 1)).toBe(16);
  });

  it('each message names what is wrong', () => {
    const cases: [string, (a: Actions) => boolean, string][] = [
      ['pinned', (a) => (a.pin(0, 2), a.demote(0, 2, 'dram', 16)), 'layer 0 block 2 is pinned'],
      ['tier', (a) => a.demote(0, 2, 'tape', 16), 'unknown tier "tape" (tiers: hbm, dram, nvme)'],
      ['bits', (a) => a.demote(0, 2, 'dram', 5), 'unsupported precision 5 bits (valid: 16, 8, 4, 3, 2)'],
      ['below', (a) => a.demote(0, 2, 'hbm', 16), 'layer 0 block 2: hbm/16b is not below hbm/16b'],
      ['promote bits', (a) => a.promote(0, 2, 6), 'unsupported precision 6 bits (valid: 16, 8, 4, 3, 2)'],
      ['resident', (a) => a.promote(0, 2), 'layer 0 block 2 is already in hbm'],
      ['full', (a) => a.demote(0, 0, 'dram', 16) && a.demote(0, 1, 'dram', 16), 'layer 0 block 1: dram is full'],
    ];
    for (const [name, act, message] of cases) {
      const { driver } = replay((v, a) => {
        if (v.step === 0 && v.layer === 0) expect(act(a), name).toBe(false);
      }, 10, 1);
      const ex = driver.counters.refusalExamples;
      expect(Object.values(ex), name).toEqual([`step 0: ${message}`]);
    }
  });

  it('demotions that alternate tier names land in the tier named each time', () => {
    const { driver, cache } = replay((v, a) => {
      if (v.step !== 1) return;
      const l = v.layer;
      expect(a.demote(l, 0, 'dram', 16)).toBe(true);
      expect(a.demote(l, 1, 'nvme', 16)).toBe(true);
      expect(a.demote(l, 2, 'nvme', 8)).toBe(true);
      expect(a.demote(l, 3, 'dram', 4)).toBe(true);
      expect(a.demote(l, 0, 'nvme', 16)).toBe(true);
      expect(a.demote(l, 4, 'hbm', 2)).toBe(true);
      expect(a.promote(l, 1)).toBe(true);
      expect(a.promote(l, 2, 16)).toBe(true);
    });
    for (const l of [0, 1]) {
      expect([0, 1, 2, 3, 4].map((b) => [cache.tierOf(l, b), cache.bitsOf(l, b)])).toEqual([
        [2, 16],
        [0, 16],
        [0, 16],
        [1, 4],
        [0, 2],
      ]);
    }
    expect(driver.counters.actions).toMatchObject({ demote: 12, promote: 4 });
  });
});
