import { describe, expect, it } from 'vitest';
import type { MoveBatch } from '../../sim/executor.js';
import { SimExecutor } from '../../sim/sim-executor.js';
import { defaultStagingRingBytes, RingPlacement, type RingSpan, type StagingFence } from '../../sim/staging-ring.js';
import { tinyHardware, tinyLayerWork, tinyModel } from '../helpers/tiny.js';

// Tiny machine (test/helpers/tiny.ts): PCIe 1 B/us with alpha 10 us per copy, attention reads its KV
// at 1 B/us, a layer's projections take 1000 us. A staging ring of 1024 bytes (extents are 256-byte aligned).
function machine(fence?: StagingFence, ringBytes = 1024, tailWaits = false) {
  return new SimExecutor(tinyHardware(), tinyModel, { traceSteps: 100, staging: fence ? { ringBytes, fence } : undefined, tailWaits });
}
const stage = (layer: number, bytes: number): MoveBatch => ({ layer, reason: 'prefetch', fromTier: 1, toTier: 0, fromBits: 16, toBits: 16, blocks: [], bytesFrom: bytes, bytesTo: bytes, runs: 1 });
const work = (layer: number, stagedBytes: number) => tinyLayerWork(layer, { residentBytes: 0, stagedBytes });

/**
 * The issue order of a layer pipeline with prefetch (as the replay driver issues it):
 *   stage layer 0 (512 B) -> extent A [0, 512); memory 0..522
 *   layer 0 waits for it   -> attention 522..1034, projections 1034..2034; A is free after the attention
 *   stage layer 1 (512 B) -> extent B [512, 1024); memory 522..1044
 *   stage layer 0 (256 B) -> the ring wraps: C [0, 256) over A, so the copy waits on the compute stream
 *   stage layer 0 (256 B) -> D [256, 512) over A: already waited for, no second wait
 *   layer 1 waits for B   -> attention 2034..2546, projections 2546..3546 (compute-bound either way)
 */
function pipeline(ex: SimExecutor) {
  ex.beginStep(0);
  const s0 = ex.stage(stage(0, 512));
  ex.layer(work(0, 512), [s0]);
  const s1 = ex.stage(stage(1, 512));
  ex.stage(stage(0, 256));
  ex.stage(stage(0, 256));
  ex.layer(work(1, 512), [s1]);
  return ex.endStep();
}

describe('staging ring (the HIL executor\'s fences on ring reuse)', () => {
  it('lazy fences: a copy into ring space an attention read waits for all compute queued by then', () => {
    const ex = machine('lazy');
    const t = pipeline(ex);
    expect(t.latency_us).toBe(3546);
    // the fence covering A is recorded behind layer 0's projections (they end at 2034): C runs 2034..2300,
    // D 2300..2566; the memory stream stood idle from 1044 to 2034
    expect(ex.memory.stallUs).toBe(990);
    expect(ex.memory.busyUs).toBe(522 + 522 + 266 + 266);
    expect(ex.ring!.waits).toBe(1);
    expect(ex.ring!.grown).toBe(0);
  });

  it('eager fences: the copy waits for the attention that read the space only', () => {
    const ex = machine('eager');
    const t = pipeline(ex);
    expect(t.latency_us).toBe(3546);
    // the fence is recorded after layer 0's attention (1034); the memory stream reaches C at 1044: no idle time
    expect(ex.memory.stallUs).toBe(0);
    expect(ex.memory.busyUs).toBe(1576);
    expect(ex.ring!.waits).toBe(1);
  });

  it("a step's barrier covers the fences before it: the next step's copy over that space does not wait (lazy and eager)", () => {
    for (const fence of ['lazy', 'eager'] as const) {
      const ex = machine(fence);
      ex.beginStep(0);
      const s0 = ex.stage(stage(0, 512));
      ex.layer(work(0, 512), [s0]);
      const s1 = ex.stage(stage(1, 512));
      ex.layer(work(1, 512), [s1]);
      ex.endStep();
      expect(ex.ring!.waits).toBe(0);
      // step 1: the ring wraps over A (read by step 0's layer 0): the HIL's barrier at the step's start covered it
      ex.beginStep(1);
      const s2 = ex.stage(stage(0, 256));
      ex.layer(work(0, 256), [s2]);
      ex.endStep();
      expect([fence, ex.ring!.waits]).toEqual([fence, 0]);
    }
    // within a step the same reuse waits (the pipeline above): 1
    const ex = machine('lazy');
    pipeline(ex);
    expect(ex.ring!.waits).toBe(1);
  });

  it('without a ring (the default of a bare SimExecutor) staging copies never wait on compute', () => {
    const ex = machine();
    expect(pipeline(ex).latency_us).toBe(3546);
    expect(ex.memory.stallUs).toBe(0);
    expect(ex.ring).toBeUndefined();
  });

  it('an extent that would overwrite a live one grows the ring instead (the HIL doubles its ring)', () => {
    const ex = machine('lazy');
    ex.beginStep(0);
    ex.stage(stage(0, 512));
    ex.stage(stage(1, 512));
    ex.stage(stage(0, 100)); // A and B are both live: the ring doubles to 2048, the extent (256 aligned) lands at [1024, 1280)
    expect(ex.ring!.bytes).toBe(2048);
    expect(ex.ring!.grown).toBe(1);
    expect(ex.ring!.waits).toBe(0);
    ex.finish();
    // no waits: three copies back to back
    expect(ex.memory.busyUs).toBe(522 + 522 + 110);
    expect(ex.memory.stallUs).toBe(0);
  });

  it('tail waits: a layer that needs memory work not yet waited for waits for everything queued on the memory stream', () => {
    // stage layer 0 (0..522), stage layer 1 (522..1044), then both layers. Exact waits: layer 0's attention
    // starts when its stage is done (522), layer 1's when layer 0 is done (2034): 3546. Tail waits (the HIL):
    // layer 0 waits for the memory stream's tail, i.e. layer 1's stage too (1044): attention 1044..1556,
    // projections ..2556; layer 1's stage is covered by that wait, so layer 1 runs 2556..4068.
    const run = (tailWaits: boolean) => {
      const ex = machine('lazy', 1024, tailWaits);
      ex.beginStep(0);
      const s0 = ex.stage(stage(0, 512));
      const s1 = ex.stage(stage(1, 512));
      ex.layer(work(0, 512), [s0]);
      ex.layer(work(1, 512), [s1]);
      return { t: ex.endStep(), ex };
    };
    const exact = run(false);
    expect(exact.t.latency_us).toBe(3546);
    expect(exact.t.stall_us).toBe(522);
    const tail = run(true);
    expect(tail.t.latency_us).toBe(4068);
    expect(tail.t.stall_us).toBe(1044);
    expect(tail.ex.ring!.waits).toBe(0);
  });

  it('the default ring is the HIL executor\'s: 3 layers of full-context FP16 KV, rounded up to 2 MiB', () => {
    // Llama-3-8B, 8192 + 64 tokens in 16-token blocks: 516 blocks of 64 KiB -> 49 slabs of 2 MiB
    // (the HIL run of lab/notes/HIL-NOTES.md reports staging_ring_bytes 102760448)
    expect(defaultStagingRingBytes(516, 65536)).toBe(102760448);
    expect(defaultStagingRingBytes(1, 1)).toBe(2 << 20);
  });
});

interface Named extends RingSpan {
  id: number;
}

/** RingPlacement's rule on a plain list sorted by start (an extent replaces the range it overlaps). */
class ListPlacement {
  readonly extents: Named[] = [];
  head = 0;
  constructor(public bytes: number) {}
  place(n: number, id: number): { ext: Named; over: number[] } | null {
    if (n > this.bytes) return null;
    const start = this.head + n > this.bytes ? 0 : this.head;
    const end = start + n;
    const lo = this.extents.findIndex((e) => e.end > start);
    const from = lo < 0 ? this.extents.length : lo;
    let j = from;
    for (; j < this.extents.length && this.extents[j].start < end; j++) if (this.extents[j].live) return null;
    const ext = { start, end, live: true, id };
    const over = this.extents.splice(from, j - from, ext).map((e) => e.id);
    this.head = end;
    return { ext, over };
  }
  grow(bytes: number, n: number): void {
    if (this.head + n <= this.bytes) this.head = this.bytes;
    this.bytes = bytes;
  }
}

describe('ring placement', () => {
  it('places, overwrites and refuses exactly as a sorted list of extents (generated requests, releases and growth)', () => {
    let state = 7;
    const rnd = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
    let placed = 0;
    let overwrote = 0;
    let refused = 0;
    let wrapped = 0;
    let grown = 0;
    for (let run = 0; run < 30; run++) {
      const bytes = 256 * (4 + Math.floor(rnd() * 40));
      const ring = new RingPlacement<Named>(bytes);
      const ref = new ListPlacement(bytes);
      const live: Named[] = [];
      let liveBytes = 0;
      let peak = 0;
      for (let k = 0; k < 400; k++) {
        if (live.length > 0 && rnd() < 0.45) {
          const [x] = live.splice(Math.floor(rnd() * live.length), 1);
          ring.release(x);
          liveBytes -= x.end - x.start;
          continue;
        }
        // mostly small extents, some large ones (a large one is then overwritten by several small ones)
        const n = 256 * (rnd() < 0.85 ? 1 + Math.floor(rnd() * 3) : 4 + Math.floor(rnd() * 12));
        let over: number[] = [];
        const got = ring.place(n, (start, end, o) => {
          over = o.map((e) => e.id);
          return { start, end, live: true, id: k };
        });
        const want = ref.place(n, k);
        if (!want) {
          expect(got).toBeNull();
          refused++;
          if (rnd() < 0.5 && ring.bytes < 1 << 16) {
            ring.grow(ring.bytes * 2, n);
            ref.grow(ref.bytes * 2, n);
            grown++;
          }
          continue;
        }
        if (!got || got.start !== want.ext.start || got.end !== want.ext.end || over.join() !== want.over.join()) {
          expect([got?.start, got?.end, over]).toEqual([want.ext.start, want.ext.end, want.over]);
        }
        if (got!.start === 0 && k > 0) wrapped++;
        // the list's extent stands for the ring's (same bounds); releases go to the ring's object
        want.ext.live = false;
        ref.extents[ref.extents.indexOf(want.ext)] = got!;
        live.push(got!);
        liveBytes += n;
        peak = Math.max(peak, liveBytes);
        placed++;
        overwrote += over.length;
        if (ring.liveBytes !== liveBytes || ring.peak !== peak) expect([ring.liveBytes, ring.peak]).toEqual([liveBytes, peak]);
      }
      for (const x of live) expect(ring.liveAt(x.start)).toBe(x);
      for (const x of ref.extents) if (!x.live) expect(ring.liveAt(x.start)).toBeUndefined();
    }
    // every path is exercised: overwrites, refusals, wraps to 0, growth
    expect(placed).toBeGreaterThan(3000);
    expect(overwrote).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(50);
    expect(wrapped).toBeGreaterThan(100);
    expect(grown).toBeGreaterThan(20);
  });
});
