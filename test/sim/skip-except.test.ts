// Actions.skipExcept(keep, scope) is skip(b) for every live block in scope with keep[b] = 0, at the
// call: a replay that asks for its skips one call per block and one that asks with one skipExcept call
// must give the same steps, counters, observations and executor timeline.
import { describe, expect, it } from 'vitest';
import { KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver, type StepResult } from '../../sim/replay-driver.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import type { Actions, Observation, Policy, PolicyView, SkipScope } from '../../policies/policy.js';
import { denseSteps, tinyHardware, tinyHeader, tinyModel } from '../helpers/tiny.js';

/** a small seeded generator (LCG), the same sequence for both replays */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

type Mode = 'per-block' | 'bulk' | 'listed';

/**
 * A random policy: each decision demotes, promotes, quantizes, evicts and stages a few blocks of the
 * layer, then skips the blocks in scope outside a random keep mask; some decisions change the cache
 * after the skip (a promotion of a skipped block, an eviction), which must not change what was skipped.
 */
function randomPolicy(seed: number, mode: Mode, seen: string[]): Policy {
  const rnd = lcg(seed);
  const keep = new Uint8Array(64);
  return {
    name: `random-${mode}`,
    decide(v: PolicyView, a: Actions) {
      const l = v.layer;
      const c = v.cache;
      const created = c.created[l];
      const pick = () => Math.floor(rnd() * created);
      for (let k = 0; k < 3; k++) {
        const r = rnd();
        const b = pick();
        if (r < 0.3) a.demote(l, b, rnd() < 0.7 ? 'dram' : 'nvme', rnd() < 0.7 ? 16 : 8);
        else if (r < 0.45) a.promote(l, b);
        else if (r < 0.6) a.prefetch(l, b);
        else if (r < 0.65) a.evict(l, b);
        else if (r < 0.7) a.prefetchOffloaded(l);
      }
      if (v.step < 0) return;
      const scope: SkipScope = rnd() < 0.5 ? 'offloaded' : 'all';
      const minTier = scope === 'all' ? 0 : 1;
      // keep covers a random prefix of the blocks (the rest count as not kept)
      const len = Math.floor(rnd() * (created + 2));
      const kk = keep.subarray(0, len);
      for (let b = 0; b < len; b++) kk[b] = rnd() < 0.4 ? 1 : 0;
      if (rnd() < 0.2) kk.fill(1); // nothing to skip
      if (mode === 'bulk') seen.push(`n=${a.skipExcept(kk, scope)}`);
      else if (mode === 'listed') {
        // the kept blocks as a list, backwards, with a repeat and blocks that do not exist
        const list: number[] = [created + 3, -1];
        for (let b = len - 1; b >= 0; b--) if (kk[b]) list.push(b, b);
        list.push(0.5);
        seen.push(`n=${a.skipExceptListed(list, list.length, scope)}`);
      } else {
        let n = 0;
        for (let b = 0; b < created; b++) {
          if (c.tierOf(l, b) >= minTier && !(b < len && kk[b] !== 0)) {
            a.skip(b);
            n++;
          }
        }
        seen.push(`n=${n}`);
      }
      // the keep mask may change after the call; so may the cache; more skips may follow
      kk.fill(rnd() < 0.5 ? 1 : 0);
      if (rnd() < 0.3) a.promote(l, pick());
      if (rnd() < 0.2) a.evict(l, pick());
      if (rnd() < 0.1) a.skip(pick());
    },
    observe(o: Observation) {
      seen.push(`${o.step}/${o.layer}: ${o.attendedCount} [${Array.from(o.attended).join('')}]`);
    },
  };
}

function replay(seed: number, mode: Mode) {
  const h = tinyHeader(40, 12);
  const trace = denseSteps(h, (s, l, n) => Array.from({ length: n }, (_, b) => ((s + 3 * l + b) % 5) / (2 * n)));
  const maxBlocks = trace[trace.length - 1].layers[0].nBlocks;
  const cache = new KVCache(tinyModel, 4, 2, maxBlocks, [
    { name: 'hbm', capacityBytes: 2 * 64 * 8 },
    { name: 'dram', capacityBytes: 2 * 64 * 6 },
    { name: 'nvme', capacityBytes: 1e9 },
  ]);
  const ex = new SimExecutor(tinyHardware(), tinyModel, { traceSteps: 100 });
  const seen: string[] = [];
  const driver = new ReplayDriver(h, cache, randomPolicy(seed, mode, seen), ex, 8);
  const results: StepResult[] = [];
  driver.run(trace, (r) => results.push({ ...r, recall: Float64Array.from(r.recall) }));
  cache.audit();
  return { results, seen, counters: driver.counters, spans: ex.spans.map((s) => `${s.stream} ${s.name} ${s.start}-${s.end}`) };
}

describe('Actions.skipExcept and skipExceptListed', () => {
  it('replays exactly as the same skips asked one block at a time (random policies)', () => {
    for (let seed = 1; seed <= 12; seed++) {
      const a = replay(seed, 'per-block');
      for (const mode of ['bulk', 'listed'] as const) {
        const b = replay(seed, mode);
        expect(b.seen).toEqual(a.seen);
        expect(b.results).toEqual(a.results);
        expect(b.counters).toEqual(a.counters);
        expect(b.spans).toEqual(a.spans);
      }
      // the decisions do skip blocks
      expect(a.seen.filter((x) => /^n=[1-9]/.test(x)).length).toBeGreaterThan(5);
    }
  });

  it('skips the live blocks in scope outside keep, and answers how many', () => {
    const h = tinyHeader(24, 1, 1); // 6 prompt blocks, 7 at step 0
    const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
    const cache = new KVCache(tinyModel, 4, 1, 7, [
      { name: 'hbm', capacityBytes: 64 * 10 },
      { name: 'dram', capacityBytes: 1e9 },
      { name: 'nvme', capacityBytes: 1e9 },
    ]);
    const answers: number[] = [];
    let attended = '';
    const policy: Policy = {
      name: 'script',
      decide(v, a) {
        if (v.step < 0) {
          for (const b of [1, 2, 4]) a.demote(0, b, 'dram', 16);
          a.evict(0, 5);
          return;
        }
        // blocks 0..5 exist (block 6 is created after the decision); 5 was evicted; 1, 2, 4 in dram
        answers.push(a.skipExcept(Uint8Array.of(0, 0, 1), 'offloaded')); // skips 1 and 4 (2 kept)
        answers.push(a.skipExcept(null, 'all')); // then every live block: 0, 1, 2, 3, 4
        answers.push(a.skipExcept(new Uint8Array(6).fill(1), 'all'));
      },
      observe(o) {
        if (o.step === 0) attended = `${o.attendedCount} ${Array.from(o.attended).join('')}`;
      },
    };
    new ReplayDriver(h, cache, policy, new SimExecutor(tinyHardware(), tinyModel), 10).run(trace, () => undefined);
    expect(answers).toEqual([2, 5, 0]);
    // only the new block 6 is attended
    expect(attended).toBe('1 0000001');
  });

  it('a block created after the call into a full HBM (spilled below it) is attended, with either scope', () => {
    const h = tinyHeader(24, 1, 1); // 6 prompt blocks, 7 at step 0
    const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
    const run = (list: number[], scope: SkipScope) => {
      // HBM holds 4 blocks: prefill puts blocks 4 and 5 in dram, and block 6 spills there too
      const cache = new KVCache(tinyModel, 4, 1, 7, [
        { name: 'hbm', capacityBytes: 64 * 4 },
        { name: 'dram', capacityBytes: 1e9 },
        { name: 'nvme', capacityBytes: 1e9 },
      ]);
      const answers: number[] = [];
      let attended = '';
      const policy: Policy = {
        name: 'script',
        decide(v, a) {
          if (v.step === 0) answers.push(a.skipExceptListed(list, list.length, scope));
        },
        observe(o) {
          if (o.step === 0) attended = `${o.attendedCount} ${Array.from(o.attended).join('')}`;
        },
      };
      const driver = new ReplayDriver(h, cache, policy, new SimExecutor(tinyHardware(), tinyModel), 4);
      driver.run(trace, () => undefined);
      return { answers, attended, tier6: cache.tierOf(0, 6) };
    };
    // 'offloaded': blocks 4 and 5 in scope, 4 listed: 5 skipped; 0-3 resident and 6 (created after) attended
    expect(run([4], 'offloaded')).toEqual({ answers: [1], attended: '6 1111101', tier6: 1 });
    // 'all': blocks 0-5 in scope, 0 and 4 listed: 1, 2, 3, 5 skipped
    expect(run([0, 4], 'all')).toEqual({ answers: [4], attended: '3 1000101', tier6: 1 });
  });

  it('the skips are the blocks in scope at the call, after a block moves twice since and a later skip() turns the list into marks', () => {
    const h = tinyHeader(24, 1, 1); // 6 prompt blocks, 7 at step 0
    const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
    const cache = new KVCache(tinyModel, 4, 1, 7, [
      { name: 'hbm', capacityBytes: 64 * 10 },
      { name: 'dram', capacityBytes: 1e9 },
      { name: 'nvme', capacityBytes: 1e9 },
    ]);
    let attended = '';
    const policy: Policy = {
      name: 'script',
      decide(v, a) {
        if (v.step < 0) {
          for (const b of [1, 2, 4]) a.demote(0, b, 'dram', 16);
          return;
        }
        // in scope at the call: 1, 2, 4 (dram); 2 listed: 1 and 4 skipped
        a.skipExceptListed([2], 1, 'offloaded');
        // block 1 goes to HBM and back to nvme, block 3 from HBM to dram: neither changes the skips
        a.promote(0, 1);
        a.demote(0, 1, 'nvme', 16);
        a.demote(0, 3, 'dram', 16);
        a.skip(0); // a skip of a resident block: the list becomes marks
      },
      observe(o) {
        if (o.step === 0) attended = `${o.attendedCount} ${Array.from(o.attended).join('')}`;
      },
    };
    new ReplayDriver(h, cache, policy, new SimExecutor(tinyHardware(), tinyModel), 10).run(trace, () => undefined);
    // skipped 0, 1, 4; attended 2, 3, 5 and the new block 6
    expect(attended).toBe('4 0011011');
  });
});

