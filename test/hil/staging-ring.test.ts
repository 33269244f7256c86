// The staging ring's placement, shared by the HIL executor (hil/executor/staging-ring.ts) and the
// simulator (sim/staging-ring.ts): exact placements, what a reused extent inherits, and the two rings
// placing the same extents for the same requests.
import { describe, expect, it } from 'vitest';
import { RingFullError, StagingRing } from '../../hil/executor/staging-ring.js';
import { makeRng } from '../../hil/rng.js';
import { RingPlacement, type RingSpan, StagingRing as SimStagingRing } from '../../sim/staging-ring.js';
import { Signal } from '../../sim/signal.js';

interface Tagged extends RingSpan {
  name: string;
}

describe('RingPlacement', () => {
  it('places in ring order, wraps to 0, refuses to overwrite live extents, hands back the released ones it overwrites', () => {
    const ring = new RingPlacement<Tagged>(1024);
    const seen: string[] = [];
    const make = (name: string) => (start: number, end: number, over: readonly Tagged[]) => {
      seen.push(`${name} [${start},${end}) over ${over.map((e) => e.name).join('+') || '-'}`);
      return { start, end, live: true, name };
    };
    const a = ring.place(512, make('A'))!;
    const b = ring.place(512, make('B'))!;
    expect(ring.place(256, make('x'))).toBeNull(); // the ring wraps to 0, where A is live
    ring.release(a);
    const c = ring.place(256, make('C'))!;
    const d = ring.place(256, make('D'))!; // A was dropped when C overwrote it
    ring.release(b);
    ring.release(c);
    const e = ring.place(512, make('E'))!; // from D's end: [512, 1024) over B
    expect(ring.place(1025, make('y'))).toBeNull();
    expect(seen).toEqual(['A [0,512) over -', 'B [512,1024) over -', 'C [0,256) over A', 'D [256,512) over -', 'E [512,1024) over B']);
    expect([d.start, e.start]).toEqual([256, 512]);
    expect(ring.liveBytes).toBe(256 + 512);
    expect(ring.peak).toBe(1024);
    expect(ring.liveAt(512)).toBe(e);
    expect(ring.liveAt(0)).toBeUndefined();
    expect(() => ring.release(c)).toThrow('staging extent 0 released twice');
  });
});

describe('simulator staging ring growth', () => {
  it('an extent refused at the head (not for wrapping) grows the ring and goes into the added space', () => {
    const tail = () => new Signal();
    const ring = new SimStagingRing(1024, 'lazy', tail);
    const a = ring.alloc(512).extent;
    ring.alloc(256);
    ring.alloc(256);
    ring.release([a], tail());
    expect(ring.alloc(256).extent.start).toBe(0); // wraps over A; the head is at 256, B [512, 768) live
    const e = ring.alloc(512).extent; // [256, 768) overlaps B: growing in place would refuse it forever
    expect([e.start, e.end, ring.bytes, ring.grown]).toEqual([1024, 1536, 2048, 1]);
  });

  it('an extent refused for wrapping onto a live one is placed at the head of the grown ring', () => {
    const tail = () => new Signal();
    const ring = new SimStagingRing(1024, 'lazy', tail);
    ring.alloc(512);
    ring.alloc(256);
    const e = ring.alloc(512).extent; // from 768 it wraps to 0, where A is live; grown, it fits at 768
    expect([e.start, ring.bytes, ring.grown]).toEqual([768, 2048, 1]);
  });
});

describe('HIL staging ring', () => {
  it('a reused extent inherits the accesses of the extents it overwrites (merged per stream)', () => {
    const ring = new StagingRing(1024);
    const a = ring.alloc(512);
    const b = ring.alloc(256);
    expect([a.offset, b.offset]).toEqual([0, 512]);
    a.acc[0] = 3; // the attention that read A is covered by compute fence 3
    a.acc[1] = 1;
    b.acc[0] = 5;
    ring.release(0);
    ring.release(512);
    const c = ring.alloc(256); // head at 768: [768, 1024) overwrites nothing
    expect(c).toEqual({ offset: 768, acc: [0, 0] });
    const d = ring.alloc(768); // wraps: [0, 768) over A and B
    expect(d).toEqual({ offset: 0, acc: [5, 1] });
    expect(d.acc).not.toBe(a.acc);
    expect(ring.peak).toBe(1024);
  });

  it('throws RingFullError where an extent exceeds the ring or would overwrite a live one, and refuses a double release', () => {
    const ring = new StagingRing(1024);
    expect(() => ring.alloc(2048)).toThrow(RingFullError);
    ring.alloc(768);
    expect(() => ring.alloc(512)).toThrow('staging ring of 1024 bytes is full');
    ring.release(0);
    expect(() => ring.release(0)).toThrow('staging extent 0 released twice');
    expect(ring.alloc(512).offset).toBe(0);
  });

  it('places exactly as the simulator\'s ring, which grows where the HIL ring is full (generated request sequences)', () => {
    const tail = () => new Signal();
    let placedAll = 0;
    let full = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const rng = makeRng(seed);
      const bytes = 256 * (8 + Math.floor(rng.next() * 24));
      const hil = new StagingRing(bytes);
      const sim = new SimStagingRing(bytes, 'lazy', tail);
      const live: { offset: number; ext: ReturnType<SimStagingRing['alloc']>['extent'] }[] = [];
      let placed = 0;
      for (let k = 0; k < 200; k++) {
        if (live.length && rng.next() < 0.6) {
          const i = Math.floor(rng.next() * live.length);
          const [x] = live.splice(i, 1);
          hil.release(x.offset);
          sim.release([x.ext], tail());
          continue;
        }
        const n = 256 * (1 + Math.floor(rng.next() * 4));
        const s = sim.alloc(n);
        let off: number | null = null;
        try {
          off = hil.alloc(n).offset;
        } catch (e) {
          if (!(e instanceof RingFullError)) throw e;
        }
        if (off === null) {
          // the HIL lowers again with a larger ring; the simulator grows in place
          expect(sim.grown).toBe(1);
          full++;
          break;
        }
        expect(sim.grown).toBe(0);
        expect(s.extent.start).toBe(off);
        live.push({ offset: off, ext: s.extent });
        placed++;
      }
      placedAll += placed;
    }
    // both ways of ending are exercised: rings that filled up, and long runs of reuse
    expect(full).toBeGreaterThan(5);
    expect(full).toBeLessThan(40);
    expect(placedAll).toBeGreaterThan(400);
  });
});
