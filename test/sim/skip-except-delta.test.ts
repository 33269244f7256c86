// Actions.skipExceptListedDelta(added, removed) is skipExceptListed(list, 'all') with the list the
// layer's previous decision kept, changed: a replay that hands each decision's kept blocks over as
// changes must give the same steps, counters, observations and executor timeline as one that hands
// over the whole list each time, and it answers -1 (doing nothing) where it holds no such list.
import { describe, expect, it } from 'vitest';
import { KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver, type StepResult } from '../../sim/replay-driver.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import type { Actions, Observation, Policy, PolicyView } from '../../policies/policy.js';
import { denseSteps, tinyHardware, tinyHeader, tinyModel } from '../helpers/tiny.js';

/** a small seeded generator (LCG), the same sequence for both replays */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

type Mode = 'whole' | 'delta';

/**
 * A random policy: each decision moves, quantizes, stages and (rarely) evicts a few blocks, then keeps a
 * random set of blocks (a change of the set its layer attended at its previous decision, so that the
 * changes are few), asked for as the whole list or as its changes from the layer's previous list; some
 * decisions ask for no skips, or for marks first, or change the cache after the call.
 */
function randomPolicy(seed: number, mode: Mode, seen: string[], answers: number[]): Policy {
  const rnd = lcg(seed);
  // per layer: the blocks attended at its latest observation
  const attended = new Map<number, Set<number>>();
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
        if (r < 0.25) a.demote(l, b, rnd() < 0.7 ? 'dram' : 'nvme', rnd() < 0.7 ? 16 : 8);
        else if (r < 0.35) a.demote(l, b, 'hbm', 8);
        else if (r < 0.55) a.promote(l, b);
        else if (r < 0.65) a.prefetch(l, b);
        else if (r < 0.67) a.evict(l, b);
        else if (r < 0.72) a.prefetchOffloaded(l);
      }
      if (v.step < 0) return;
      const r = rnd();
      if (r < 0.05) return; // no skips
      if (r < 0.1) a.skip(pick()); // a mark first: no list is held for the changes
      // the kept set: the latest attended one with a few blocks in and out (the newest, not created yet, among them)
      const was = attended.get(l) ?? new Set<number>();
      const keep = new Set(was);
      for (let k = 0; k < 4; k++) {
        const b = pick();
        if (rnd() < 0.5) keep.delete(b);
        else keep.add(b);
      }
      if (rnd() < 0.5) keep.add(v.nBlocks - 1);
      const added = [...keep].filter((b) => !was.has(b));
      const removed = [...was].filter((b) => !keep.has(b));
      // ignored: blocks kept already added again, blocks neither kept before nor now removed, repeats,
      // blocks that do not exist
      const b = pick();
      if (keep.has(b)) added.push(b);
      else if (!was.has(b)) removed.push(b);
      if (added.length > 0) added.push(added[0]);
      if (removed.length > 0) removed.push(removed[0]);
      added.push(created + 5, -1, 0.5);
      removed.push(created + 7, -2);
      let n = -1;
      if (mode === 'delta') n = a.skipExceptListedDelta!(added, added.length, removed, removed.length);
      answers.push(n);
      if (n < 0) {
        const list = [...keep, created + 3];
        n = a.skipExceptListed(list, list.length, 'all');
      }
      seen.push(`n=${n}`);
      // the cache may change after the call; more skips may follow
      if (rnd() < 0.3) a.promote(l, pick());
      if (rnd() < 0.2) a.demote(l, pick(), 'dram', 16);
      if (rnd() < 0.05) a.evict(l, pick());
      if (rnd() < 0.05) a.skip(pick());
    },
    observe(o: Observation) {
      const s = new Set<number>();
      for (let b = 0; b < o.nBlocks; b++) if (o.attended[b]) s.add(b);
      attended.set(o.layer, s);
      seen.push(`${o.step}/${o.layer}: ${o.attendedCount} [${Array.from(o.attended).join('')}]`);
    },
  };
}

function replay(seed: number, mode: Mode) {
  const h = tinyHeader(40, 16);
  const trace = denseSteps(h, (s, l, n) => Array.from({ length: n }, (_, b) => ((s + 3 * l + b) % 5) / (2 * n)));
  const maxBlocks = trace[trace.length - 1].layers[0].nBlocks;
  const cache = new KVCache(tinyModel, 4, 2, maxBlocks, [
    { name: 'hbm', capacityBytes: 2 * 64 * 8 },
    { name: 'dram', capacityBytes: 2 * 64 * 6 },
    { name: 'nvme', capacityBytes: 1e9 },
  ]);
  const ex = new SimExecutor(tinyHardware(), tinyModel, { traceSteps: 100 });
  // every layer's work as handed to the executor (some fields, as the quantized bytes, only the HIL reads)
  const works: string[] = [];
  const layer = ex.layer.bind(ex);
  ex.layer = (w, waits) => {
    works.push(JSON.stringify({ ...w, attendedMask: Array.from(w.attendedMask) }));
    return layer(w, waits);
  };
  const seen: string[] = [];
  const answers: number[] = [];
  const driver = new ReplayDriver(h, cache, randomPolicy(seed, mode, seen, answers), ex, 8);
  const results: StepResult[] = [];
  driver.run(trace, (r) => results.push({ ...r, recall: Float64Array.from(r.recall) }));
  cache.audit();
  return { results, seen, works, answers, counters: driver.counters, spans: ex.spans.map((s) => `${s.stream} ${s.name} ${s.start}-${s.end}`) };
}

describe('Actions.skipExceptListedDelta', () => {
  it('replays exactly as the whole lists (random policies)', () => {
    let held = 0;
    let notHeld = 0;
    for (let seed = 1; seed <= 16; seed++) {
      const a = replay(seed, 'whole');
      const b = replay(seed, 'delta');
      expect(b.seen).toEqual(a.seen);
      expect(b.works).toEqual(a.works);
      expect(b.results).toEqual(a.results);
      expect(b.counters).toEqual(a.counters);
      expect(b.spans).toEqual(a.spans);
      held += b.answers.filter((n) => n >= 0).length;
      notHeld += b.answers.filter((n) => n < 0).length;
    }
    // both ways are taken, and the lists skip blocks
    expect(held).toBeGreaterThan(100);
    expect(notHeld).toBeGreaterThan(20);
  });

  it('changes the layer\'s previous list, and answers -1 where it holds none', () => {
    const h = tinyHeader(24, 5, 1); // 6 prompt blocks, 7 at steps 0-3, 8 at step 4
    const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
    const cache = new KVCache(tinyModel, 4, 1, 8, [
      { name: 'hbm', capacityBytes: 64 * 10 },
      { name: 'dram', capacityBytes: 1e9 },
      { name: 'nvme', capacityBytes: 1e9 },
    ]);
    const answers: number[] = [];
    const attended: string[] = [];
    const policy: Policy = {
      name: 'script',
      decide(v, a) {
        if (v.step < 0) {
          // blocks 1 and 2 in dram; block 2 at 8 bits
          a.demote(0, 1, 'dram', 16);
          a.demote(0, 2, 'dram', 8);
          // prefill: no list is held
          answers.push(a.skipExceptListedDelta!([], 0, [], 0));
          return;
        }
        if (v.step === 0) {
          // no list yet: -1, nothing done (every block attended but the ones the list skips)
          answers.push(a.skipExceptListedDelta!([0], 1, [], 0));
          answers.push(a.skipExceptListed([0, 2, 6], 3, 'all')); // block 6 is created after: 1, 3, 4, 5 skipped
        } else if (v.step === 1) {
          // kept {0, 2, 6}: less 0, plus 1 and 3 (1 twice, 9 does not exist): {1, 2, 3, 6}
          answers.push(a.skipExceptListedDelta!([1, 3, 1, 9], 4, [0], 1));
          // a kept block moved after the call stays kept
          a.promote(0, 2);
        } else if (v.step === 2) {
          // a skip first: -1, nothing done; the marks skip block 4 only
          a.skip(4);
          answers.push(a.skipExceptListedDelta!([], 0, [1], 1));
        } else if (v.step === 3) {
          // the decision before ended with marks: -1
          answers.push(a.skipExceptListedDelta!([], 0, [], 0));
          answers.push(a.skipExceptListed([5], 1, 'all'));
        } else if (v.step === 4) {
          // kept {5}: plus 0, less 7 (not created yet: ignored); block 7, created after the call, is attended
          answers.push(a.skipExceptListedDelta!([0], 1, [7], 1));
        }
      },
      observe(o) {
        if (o.step >= 0) attended.push(`${o.attendedCount} ${Array.from(o.attended).join('')}`);
      },
    };
    new ReplayDriver(h, cache, policy, new SimExecutor(tinyHardware(), tinyModel), 10).run(trace, () => undefined);
    expect(answers).toEqual([-1, -1, 4, 3, -1, -1, 6, 5]);
    expect(attended).toEqual(['3 1010001', '4 0111001', '6 1111011', '1 0000010', '3 10000101']);
    cache.audit();
  });
});
