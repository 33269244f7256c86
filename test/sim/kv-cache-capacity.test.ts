/**
 * KVCache owns capacity: a placement change that would overflow its destination is refused whole.
 * Tiny model: a block (4 tokens) is 64 B at 16 bits, 36 B at 8 bits (32 B + one 4 B group scale).
 */
import { describe, expect, it } from 'vitest';
import { KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver } from '../../sim/replay-driver.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import type { Actions, Policy, PolicyView } from '../../policies/policy.js';
import { denseSteps, tinyHardware, tinyHeader, tinyModel } from '../helpers/tiny.js';

function cache(hbmBytes: number, dramBytes: number, blocks = 4): KVCache {
  const c = new KVCache(tinyModel, 4, 1, 8, [
    { name: 'hbm', capacityBytes: hbmBytes },
    { name: 'dram', capacityBytes: dramBytes },
  ]);
  expect(c.createMany(0, blocks, 0, 16)).toBe(true);
  return c;
}

describe('KVCache.move capacity', () => {
  it('block sizes of the tiny model', () => {
    const c = cache(256, 0);
    expect([16, 8, 4, 2].map((b) => c.bytesOf(b))).toEqual([64, 36, 20, 12]);
    // 3 bits: 32 elements x 3 / 8 = 12 bytes of codes + one group's (scale, zero) = 16
    expect(c.bytesOf(3)).toBe(16);
  });

  it('a move into a tier that is exactly full is refused, nothing changes', () => {
    const c = cache(256, 128);
    expect(c.move(0, 0, 1, 16)).toBe(true);
    expect(c.move(0, 1, 1, 16)).toBe(true);
    expect(c.used[1]).toBe(128);
    // dram holds 128 B: a third 64 B block does not fit, although dram is not *over* capacity
    expect(c.move(0, 2, 1, 16)).toBe(false);
    expect(c.tierOf(0, 2)).toBe(0);
    expect([...c.used]).toEqual([128, 128]);
    expect(c.countIn(0, 1)).toBe(2);
    c.audit();
  });

  it('a move whose bytes overflow a partly used tier is refused; one that fits exactly is taken', () => {
    const c = cache(256, 100);
    // 36 B (8-bit) into 100 B free: fits
    expect(c.move(0, 0, 1, 8)).toBe(true);
    expect(c.used[1]).toBe(36);
    // 64 B more would make 100: exactly the capacity, taken
    expect(c.move(0, 1, 1, 16)).toBe(true);
    expect(c.used[1]).toBe(100);
    expect(c.free(1)).toBe(0);
    // 12 B (2-bit) would make 112 > 100
    expect(c.move(0, 2, 1, 2)).toBe(false);
    expect(c.bitsOf(0, 2)).toBe(16);
    expect([...c.used]).toEqual([128, 100]);
    c.audit();
  });

  it('a move within a tier counts only the growth: requantizing down always fits, back up only into free room', () => {
    const c = cache(256, 0);
    expect(c.free(0)).toBe(0);
    // 64 -> 36 B in a full tier: shrinks, fits
    expect(c.move(0, 3, 0, 8)).toBe(true);
    expect(c.used[0]).toBe(228);
    // back to 64 B needs 28 B more, and 28 B are free: fits exactly
    expect(c.move(0, 3, 0, 16)).toBe(true);
    expect(c.used[0]).toBe(256);
    // block 0 to 8 bits (228), block 1 to 2 bits (228 - 64 + 12 = 176)
    expect(c.move(0, 0, 0, 8)).toBe(true);
    expect(c.move(0, 1, 0, 2)).toBe(true);
    expect(c.used[0]).toBe(176);
    // a fresh 64 B block leaves 16 B free
    expect(c.create(0, 0, 16)).toBe(true);
    expect(c.free(0)).toBe(16);
    // block 1 back to 16 bits needs 52 B: refused; to 4 bits needs 8 B: taken
    expect(c.move(0, 1, 0, 16)).toBe(false);
    expect(c.bitsOf(0, 1)).toBe(2);
    expect(c.move(0, 1, 0, 4)).toBe(true);
    expect(c.used[0]).toBe(248);
    c.audit();
  });

  it('a tier left above its capacity (the budget restored after prefill) may still shrink and lose blocks, not grow', () => {
    const c = cache(256, 1000);
    c.capacity[0] = 128;
    // 256 B held, 128 allowed: requantizing one block down (-28 B) and moving one out are taken
    expect(c.move(0, 0, 0, 8)).toBe(true);
    expect(c.move(0, 1, 1, 16)).toBe(true);
    expect(c.used[0]).toBe(164);
    // growing back is not
    expect(c.move(0, 0, 0, 16)).toBe(false);
    expect(c.move(0, 1, 0, 16)).toBe(false);
    expect([...c.used]).toEqual([164, 64]);
  });

  it('a promotion into a full HBM is refused; after an eviction it fits', () => {
    const c = cache(192, 1000, 3);
    expect(c.move(0, 0, 1, 16)).toBe(true);
    expect(c.create(0, 0, 16)).toBe(true);
    expect(c.used[0]).toBe(192);
    expect(c.move(0, 0, 0, 16)).toBe(false);
    expect(c.tierOf(0, 0)).toBe(1);
    c.drop(0, 1);
    expect(c.move(0, 0, 0, 16)).toBe(true);
    expect([...c.used]).toEqual([192, 0]);
    c.audit();
  });
});

describe('ReplayDriver: a demotion into a full tier', () => {
  it('is refused and counted, the block stays in HBM; the next one after room is made goes through', () => {
    // 2 layers, prompt 8 tokens (2 blocks), DRAM room for exactly one block
    const h = tinyHeader(8, 2);
    const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
    const c = new KVCache(tinyModel, 4, 2, 3, [
      { name: 'hbm', capacityBytes: 2 * 64 * 10 },
      { name: 'dram', capacityBytes: 64 },
      { name: 'nvme', capacityBytes: 1e9 },
    ]);
    const got: boolean[] = [];
    const policy: Policy = {
      name: 'scripted',
      decide(v: PolicyView, a: Actions) {
        if (v.step !== 0 || v.layer !== 0) return;
        got.push(a.demote(0, 0, 'dram', 16)); // fills dram
        got.push(a.demote(0, 1, 'dram', 16)); // no room: refused
        got.push(a.demote(1, 0, 'dram', 8)); // 36 B into a full dram: refused
        got.push(a.evict(0, 0)); // frees dram
        got.push(a.demote(0, 1, 'dram', 16)); // now fits
      },
      observe: () => undefined,
    };
    const d = new ReplayDriver(h, c, policy, new SimExecutor(tinyHardware(), tinyModel), 10);
    d.run(trace, () => undefined);
    expect(got).toEqual([true, false, false, true, true]);
    expect(d.counters.refused).toEqual({ demote: 2 });
    expect(d.counters.refusalExamples.demote).toBe('step 0: layer 0 block 1: dram is full');
    expect(d.counters.actions).toEqual({ demote: 2, evict: 1 });
    expect([0, 1, 2].map((b) => c.tierOf(0, b))).toEqual([-2, 1, 0]);
    expect([0, 1, 2].map((b) => c.tierOf(1, b))).toEqual([0, 0, 0]);
    expect(c.used[1]).toBe(64);
    c.audit();
  });
});
