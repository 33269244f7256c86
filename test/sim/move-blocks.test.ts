/**
 * The driver's demoteBlocks, promoteBlocks and prefetchBlocks against the single calls they stand for: random lists
 * (blocks in every tier, at several precisions, pinned, evicted, out of range, not whole numbers;
 * unknown tiers and precisions; tiers that fill up; after a bulk stage; after a list of blocks to
 * attend; blocks of the layer's kept list of attended blocks) handed over as batches, each refusal answered by
 * going on after it, must give the same answers, the same cache after every decision, the same
 * refusals (counts and first messages), action counts, stages and per-step timings as demote(),
 * promote() and prefetch() called block by block.
 */
import { describe, expect, it } from 'vitest';
import { HbmSlots } from '../../sim/hbm-slots.js';
import { KVCache } from '../../sim/kv-cache.js';
import type { MoveBatch } from '../../sim/executor.js';
import { ReplayDriver, type StepResult } from '../../sim/replay-driver.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import type { Actions, Policy, PolicyView } from '../../policies/policy.js';
import { denseSteps, tinyHardware, tinyHeader, tinyModel } from '../helpers/tiny.js';

/** a small deterministic generator (the same lists for both replays) */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

const TIERS = ['hbm', 'dram', 'nvme'];

/**
 * One replay whose decisions move random lists, by batches or block by block; what it saw. slots:
 * blocks of 256 tokens (4 KiB at 16 bits) placed on HBM slots, whose copy counts depend on the order
 * of a flush's moves.
 */
function replay(seed: number, batched: boolean, hbmBlocks: number, dramBlocks: number, slots: boolean) {
  const block = slots ? 256 : 4;
  const h = { ...tinyHeader(slots ? 10 * block - 100 : 40, slots ? 40 : 6), block_size: block };
  const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
  const maxBlocks = trace[trace.length - 1].layers[0].nBlocks;
  const bytes = 16 * block;
  const cache = new KVCache(tinyModel, block, 2, maxBlocks, [
    { name: 'hbm', capacityBytes: 2 * bytes * hbmBlocks },
    { name: 'dram', capacityBytes: bytes * dramBlocks },
    { name: 'nvme', capacityBytes: 1e9 },
  ]);
  const rnd = lcg(seed);
  const answers: number[] = [];
  const states: string[] = [];
  const list = new Float64Array(64);
  const pick = (n: number, created: number): number => {
    const r = rnd();
    // mostly live blocks; some out of range, negative or not whole numbers
    if (r < 0.9) return Math.floor(rnd() * created);
    if (r < 0.94) return created + Math.floor(rnd() * 3);
    if (r < 0.97) return -1;
    return n + 0.5;
  };
  const decide = (v: PolicyView, a: Actions): void => {
    const l = v.layer;
    const created = cache.created[l];
    if (created === 0) return;
    // some pins, unpins and evictions, the same in both replays
    if (rnd() < 0.3) a.pin(l, Math.floor(rnd() * created));
    if (rnd() < 0.3) a.unpin(l, Math.floor(rnd() * created));
    if (rnd() < 0.1) a.evict(l, Math.floor(rnd() * created));
    // (a bulk stage before the moves: blocks moved after it count as staged)
    if (rnd() < 0.3) a.prefetchOffloaded(l);
    // (a list of blocks to attend asked for before the moves: the driver logs each moved block's tier)
    if (rnd() < 0.3) {
      const early = Int32Array.from({ length: Math.floor(rnd() * created) }, () => Math.floor(rnd() * created));
      a.skipExceptListed(early, early.length, rnd() < 0.5 ? 'all' : 'offloaded');
    }
    // (a list demoted and then promoted as it was, some of it twice: blocks moved more than once in a flush)
    let again = false;
    let n = 0;
    for (let round = 0; round < 4; round++) {
      if (!again) {
        n = 1 + Math.floor(rnd() * 40);
        for (let i = 0; i < n; i++) list[i] = pick(i, created);
      }
      const demoting = again ? round % 2 === 0 : rnd() < 0.5;
      again = rnd() < 0.5;
      if (demoting) {
        const r = rnd();
        const tier = r < 0.05 ? 'tape' : TIERS[Math.floor(rnd() * 3)];

        const bits = rnd() < 0.05 ? 5 : [16, 8, 4, 3, 2][Math.floor(rnd() * 5)];
        const layer = rnd() < 0.03 ? 99 : l;
        if (batched) {
          for (let i = 0; i < n; ) {
            const j = a.demoteBlocks!(layer, list, i, n, tier, bits);
            for (; i < j; i++) answers.push(1);
            if (j < n) answers.push(0);
            i = j + 1;
          }
        } else for (let i = 0; i < n; i++) answers.push(a.demote(layer, list[i], tier, bits) ? 1 : 0);
      } else {
        const layer = rnd() < 0.03 ? -1 : l;
        // (the single calls: blocks in HBM or evicted are passed over, as promoteBlocks does)
        if (batched) {
          for (let i = 0; i < n; ) {
            const j = a.promoteBlocks!(layer, list, i, n);
            for (; i < j; i++) answers.push(2);
            if (j < n) answers.push(0);
            i = j + 1;
          }
        } else {
          for (let i = 0; i < n; i++) {
            const b = list[i];
            const live = Number.isInteger(layer) && layer >= 0 && layer < cache.layers && Number.isInteger(b) && b >= 0 && b < cache.created[layer];
            const t = live ? cache.tierOf(layer, b) : 1;
            if (live && t <= 0) answers.push(2);
            else answers.push(a.promote(layer, b) ? 2 : 0);
          }
        }
      }
      if (!again && rnd() < 0.3) a.prefetch(l, Math.floor(rnd() * created));
    }
    // (a list prefetched: blocks in every tier, some twice, until the tier's unstaged bytes run out)
    if (rnd() < 0.6) {
      const m = 1 + Math.floor(rnd() * 24);
      for (let i = 0; i < m; i++) list[i] = pick(i, created);
      const layer = rnd() < 0.03 ? 99 : l;
      if (batched) {
        for (let i = 0; i < m; ) {
          const j = a.prefetchBlocks!(layer, list, i, m);
          for (; i < j; i++) answers.push(3);
          if (j < m) answers.push(0);
          i = j + 1;
        }
      } else for (let i = 0; i < m; i++) answers.push(a.prefetch(layer, list[i]) ? 3 : 0);
    }
    // (a list of the blocks to attend: the layer's next decision moves blocks of that list, whose counts the driver keeps)
    // (the same list as before where the driver holds it: the layer's work then from the kept counts)
    if (rnd() < 0.7) {
      const keep = Int32Array.from({ length: Math.floor(rnd() * created) }, () => Math.floor(rnd() * created));
      const scope = rnd() < 0.8 ? 'all' : 'offloaded';
      const same = rnd() < 0.5 ? a.skipExceptListedDelta!(keep, 0, keep, 0) : -1;
      if (same < 0) a.skipExceptListed(keep, keep.length, scope);
    }
    states.push(`${l}:${[...cache.tier.subarray(l * maxBlocks, l * maxBlocks + created)].join(',')}/${[...cache.bits.subarray(l * maxBlocks, l * maxBlocks + created)].join(',')}`);
    cache.audit();
  };
  const policy: Policy = { name: 'scripted', decide, observe: () => undefined };
  const ex = new SimExecutor(tinyHardware(), tinyModel, { traceSteps: 0 });
  const batches: MoveBatch[] = [];
  const move = ex.move.bind(ex);
  ex.move = (b: MoveBatch) => {
    batches.push({ ...b, blocks: [...b.blocks] });
    return move(b);
  };
  const stages: MoveBatch[] = [];
  const stage = ex.stage.bind(ex);
  ex.stage = (b: MoveBatch) => {
    stages.push({ ...b, blocks: [...b.blocks] });
    return stage(b);
  };
  const driver = new ReplayDriver(h, cache, policy, ex, hbmBlocks);
  if (slots) driver.hbmSlots = new HbmSlots(2, maxBlocks);
  const steps: StepResult[] = [];
  driver.run(trace, (r) => steps.push(r));
  cache.audit();
  return { answers, states, batches, stages, steps, counters: driver.counters };
}

describe('ReplayDriver demoteBlocks, promoteBlocks and prefetchBlocks', () => {
  // (the prompt's decisions are untimed, the decode steps' timed: both kinds of counting)
  for (const [hbm, dram, slots] of [
    [12, 1000, false],
    [6, 8, false],
    [30, 3, false],
    [6, 1000, true],
    [10, 12, true],
  ] as const) {
    it(`same as the single calls: HBM ${hbm} blocks, DRAM ${dram}${slots ? ', HBM slots' : ''}`, () => {
      for (let seed = 1; seed <= 6; seed++) {
        const one = replay(seed, false, hbm, dram, slots);
        const batch = replay(seed, true, hbm, dram, slots);
        expect(batch.answers, `seed ${seed}`).toEqual(one.answers);
        expect(batch.states).toEqual(one.states);
        expect(batch.counters).toEqual(one.counters);
        expect(batch.batches).toEqual(one.batches);
        expect(batch.stages).toEqual(one.stages);
        expect(batch.steps).toEqual(one.steps);
        // (the lists moved blocks and were refused some)
        expect(one.answers.filter((x) => x === 1).length).toBeGreaterThan(0);
        expect(one.answers.filter((x) => x === 2).length).toBeGreaterThan(0);
        expect(one.answers.filter((x) => x === 0).length).toBeGreaterThan(0);
        expect(one.answers.filter((x) => x === 3).length).toBeGreaterThan(0);
      }
    });
  }
});
