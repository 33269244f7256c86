/**
 * The staging ring hands the extent objects it dropped (released and overwritten) to later placements
 * (StagingRing.reuseExtents). Checked here against the ring that makes a new object instead, over
 * generated placements, releases and barriers with both fence modes: the same bounds, waits and
 * counters at every placement, and no extent held by its user (placed, not released) ever handed out
 * again or changed.
 */
import { describe, expect, it } from 'vitest';
import { makeRng } from '../../hil/rng.js';
import { Signal } from '../../sim/signal.js';
import { type RingExtent, StagingRing, STAGING_FENCES } from '../../sim/staging-ring.js';

/** a ring whose compute tail is a new signal numbered in `seq` at each call */
function ring(bytes: number, fence: (typeof STAGING_FENCES)[number], reuse: boolean) {
  const seq = new Map<Signal, number>();
  const r = new StagingRing(bytes, fence, () => {
    const s = new Signal();
    seq.set(s, seq.size);
    return s;
  });
  r.reuseExtents = reuse;
  return { r, seq };
}

describe('staging ring, dropped extents reused', () => {
  it('places as the ring without reuse, and never hands out an extent its user holds', () => {
    let reused = 0;
    let placed = 0;
    let waits = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const rnd = makeRng(seed).next;
      const fence = STAGING_FENCES[seed % STAGING_FENCES.length];
      const bytes = 256 * (8 + Math.floor(rnd() * 40));
      const a = ring(bytes, fence, true);
      const b = ring(bytes, fence, false);
      /** extents placed and not released (of a, with the bounds they were placed at), and b's alongside */
      const held: { e: RingExtent; start: number; end: number; other: RingExtent }[] = [];
      const objects = new Set<RingExtent>();
      let attention = 0;
      for (let k = 0; k < 600; k++) {
        const x = rnd();
        if ((x < 0.3 || held.length > 12) && held.length > 0) {
          // an attention reads some held extents (a layer's): they are released under its signal
          const n = 1 + Math.floor(rnd() * Math.min(4, held.length));
          const out = held.splice(Math.floor(rnd() * (held.length - n + 1)), n);
          const sa = new Signal();
          const sb = new Signal();
          a.seq.set(sa, 1e6 + attention);
          b.seq.set(sb, 1e6 + attention++);
          a.r.release(out.map((h) => h.e), sa);
          b.r.release(out.map((h) => h.other), sb);
          continue;
        }
        if (x < 0.31) {
          a.r.barrier();
          b.r.barrier();
          continue;
        }
        // mostly small extents, some large ones (which then overwrite several small ones)
        const n = rnd() < 0.85 ? 1 + Math.floor(rnd() * 1500) : 1500 + Math.floor(rnd() * 4000);
        const ea = a.r.place(n);
        const eb = b.r.place(n);
        if (ea.start !== eb.start || ea.end !== eb.end || !ea.live || ea.fence !== eb.fence) expect([ea.start, ea.end, ea.live, ea.fence]).toEqual([eb.start, eb.end, eb.live, eb.fence]);
        const wa = a.r.placedWait;
        const wb = b.r.placedWait;
        const ka = wa === null ? null : a.seq.get(wa);
        const kb = wb === null ? null : b.seq.get(wb);
        if (ka !== kb) expect(ka).toBe(kb);
        if (wa) waits++;
        if (objects.has(ea)) reused++;
        objects.add(ea);
        placed++;
        // a reused object is never one still held
        for (const h of held) if (h.e === ea) expect(h.e).not.toBe(ea);
        held.push({ e: ea, start: ea.start, end: ea.end, other: eb });
        for (const h of held) if (h.e.start !== h.start || h.e.end !== h.end || !h.e.live) expect([h.e.start, h.e.end, h.e.live]).toEqual([h.start, h.end, true]);
        if (a.r.bytes !== b.r.bytes || a.r.waits !== b.r.waits || a.r.grown !== b.r.grown) expect([a.r.bytes, a.r.waits, a.r.grown]).toEqual([b.r.bytes, b.r.waits, b.r.grown]);
      }
    }
    expect(placed).toBeGreaterThan(15000);
    expect(waits).toBeGreaterThan(300);
    // dropped objects do serve later placements
    expect(reused).toBeGreaterThan(10000);
  });
});
