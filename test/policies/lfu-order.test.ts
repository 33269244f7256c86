/**
 * LfuOrder, the LFU core shared by the attention-level LFU replacer and the prefix-cache LFU policy:
 * against a plain scan model over random operations, and the two users against each other.
 */
import { describe, expect, it } from 'vitest';
import { LfuOrder } from '../../policies/lfu-order.js';
import { LfuReplacer } from '../../policies/replacers.js';
import { LfuPolicy } from '../../serving/lfu-policy.js';

const lcg = (seed: number) => () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);

/** The definition, by scan: fewest uses, then oldest last-use tick, among present unpinned ids. */
class ScanModel {
  readonly uses = new Map<number, number>();
  readonly tick = new Map<number, number>();
  readonly pinned = new Set<number>();
  private clock = 0;
  insert(id: number, pinned: boolean) {
    this.uses.set(id, 1);
    this.tick.set(id, this.clock++);
    if (pinned) this.pinned.add(id);
    else this.pinned.delete(id);
  }
  access(id: number) {
    if (!this.uses.has(id)) return;
    this.uses.set(id, this.uses.get(id)! + 1);
    if (!this.pinned.has(id)) this.tick.set(id, this.clock++);
  }
  pin(id: number) {
    if (this.uses.has(id)) this.pinned.add(id);
  }
  unpin(id: number) {
    if (!this.uses.has(id)) return;
    this.pinned.delete(id);
    this.tick.set(id, this.clock++);
  }
  remove(id: number) {
    this.uses.delete(id);
    this.pinned.delete(id);
  }
  peek(): number {
    let best = -1;
    for (const [id, u] of this.uses) {
      if (this.pinned.has(id)) continue;
      if (best < 0 || u < this.uses.get(best)! || (u === this.uses.get(best)! && this.tick.get(id)! < this.tick.get(best)!)) best = id;
    }
    return best;
  }
}

describe('LfuOrder', () => {
  it('evicts the least used, least recent among equals (hand-made)', () => {
    const o = new LfuOrder(2);
    for (const id of [4, 9, 6]) o.insert(id, false);
    o.access(9);
    o.access(4);
    o.access(4);
    o.access(6);
    o.access(42); // absent: ignored
    // uses: 4 -> 3, 9 -> 2, 6 -> 2 (6 used after 9)
    expect(o.peek()).toBe(9);
    expect(o.peek()).toBe(9);
    expect([o.evict(), o.evict(), o.evict(), o.evict()]).toEqual([9, 6, 4, -1]);
  });

  it.each([
    ['ticks below 2^31', 2 ** 31 - 1],
    ['ticks renumbered every few hundred uses', 500],
  ])('matches the scan model under random operations, pins and re-entries, heap sweeps included (%s)', (_what, tickLimit) => {
    const rnd = lcg(2024);
    const o = new LfuOrder(4, tickLimit);
    const m = new ScanModel();
    for (let i = 0; i < 30_000; i++) {
      const id = Math.floor(rnd() * 300);
      const r = rnd();
      const present = m.uses.has(id);
      if (r < 0.25) {
        if (!present) {
          const pinned = rnd() < 0.2;
          o.insert(id, pinned);
          m.insert(id, pinned);
        }
      } else if (r < 0.65) {
        o.access(id);
        m.access(id);
      } else if (r < 0.72) {
        if (present && !m.pinned.has(id)) {
          o.pin(id);
          m.pin(id);
        }
      } else if (r < 0.8) {
        if (present && m.pinned.has(id)) {
          o.unpin(id);
          m.unpin(id);
        }
      } else if (r < 0.85) {
        o.remove(id);
        m.remove(id);
      } else {
        const want = m.peek();
        expect(o.peek()).toBe(want);
        expect(o.evict()).toBe(want);
        if (want >= 0) m.remove(want);
      }
    }
  });

  it('the attention-level replacer and the prefix-cache policy pick the same victims for the same uses', () => {
    const rnd = lcg(99);
    const rep = new LfuReplacer(64);
    const pol = new LfuPolicy();
    const present = new Set<number>();
    const victims: number[][] = [[], []];
    for (let i = 0; i < 5000; i++) {
      const b = Math.floor(rnd() * 64);
      if (!present.has(b)) {
        rep.admit(b);
        pol.insert(b, false);
        present.add(b);
      } else if (rnd() < 0.8) {
        rep.hit(b);
        pol.access(b);
      }
      if (present.size > 40) {
        const v = rep.victim();
        rep.remove(v);
        victims[0].push(v);
        victims[1].push(pol.evict());
        present.delete(v);
      }
    }
    expect(victims[0].length).toBeGreaterThan(1000);
    expect(victims[0]).toEqual(victims[1]);
  });
});
