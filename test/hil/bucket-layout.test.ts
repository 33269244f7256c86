// Per-bit buckets in the HBM arena (hil/executor/bucket-allocator.ts): the allocator by hand, the
// layout a SmartKV run lowers to (each layer's blocks of one width in one region, nothing of another
// bucket inside it), and a host run of it that checks every block's bytes.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { BucketAllocator } from '../../hil/executor/bucket-allocator.js';
import { hilRun } from '../../hil/executor/hil-run.js';
import { allLinkKeys } from '../../hil/executor/link-keys.js';
import { lowerPlan } from '../../hil/executor/lower-plan.js';
import type { LoweredPlan } from '../../hil/executor/lowered-plan.js';
import { PlanRecorder } from '../../hil/executor/plan-recorder.js';
import { simulate, type RunConfig } from '../../sim/run.js';
import { backendAvailability } from './availability.js';
import { makeHilFixture } from './hil-fixtures.js';

describe('BucketAllocator', () => {
  it('lays regions out by (layer, block size), 4 KiB aligned, and hands out the lowest free slot', () => {
    const a = new BucketAllocator(1000, [
      { bucket: 1, slotBytes: 300, count: 2 },
      { bucket: 0, slotBytes: 500, count: 3 },
      { bucket: 0, slotBytes: 200, count: 1 },
      { bucket: 2, slotBytes: 100, count: 0 },
    ]);
    // (0, 500) at 4096 (3 slots, to 5596); (0, 200) at 8192 (to 8392); (1, 300) at 12288 (to 12888)
    expect(a.region(0, 500)).toEqual({ start: 4096, count: 3 });
    expect(a.region(0, 200)).toEqual({ start: 8192, count: 1 });
    expect(a.region(1, 300)).toEqual({ start: 12288, count: 2 });
    expect(a.region(2, 100)).toBeUndefined();
    expect(a.extent).toBe(12888 - 1000);
    expect([a.alloc(500, 0).offset, a.alloc(500, 0).offset, a.alloc(500, 0).offset]).toEqual([4096, 4596, 5096]);
    expect(() => a.alloc(500, 0)).toThrow('bucket of layer 0 at 500-byte blocks is full (3 slots');
    expect(() => a.alloc(300, 0)).toThrow('no bucket for layer 0 at 300-byte blocks');
    a.free(4596);
    a.free(4096);
    expect(() => a.free(4096)).toThrow('freed twice');
    expect(a.alloc(500, 0).offset).toBe(4096);
    expect(a.alloc(500, 0).offset).toBe(4596);
    // a slot's accesses survive its reuse (the fences see the previous occupant)
    const s = a.alloc(300, 1);
    s.acc[0] = 7;
    a.free(s.offset);
    expect(a.alloc(300, 1).acc[0]).toBe(7);
  });
});

const host = backendAvailability('host');
const fx = makeHilFixture(256, 20);
afterAll(() => rmSync(fx.dir, { recursive: true, force: true }));
// avg 2.97 bits: 16 prompt blocks take 8, 8, 4, 3 and 2 bits (15.52 extra bits: 6 + 6 + 2 + 1)
const config: RunConfig = { trace: fx.trace, policy: 'smartkv', policy_options: { avg_bits: '2.97' }, model: fx.model, hardware: 'h100-pcie5', hbm_budget: '25%', group_size: 64 };

function lowered(hbmLayout: 'slabs' | 'buckets'): LoweredPlan {
  let recorder: PlanRecorder | undefined;
  const r = simulate(config, {
    executor: (resolved, cache) => (recorder = new PlanRecorder(cache, allLinkKeys(resolved.hardware))),
  });
  return lowerPlan(recorder!.plan, r.resolved.model, r.resolved.hardware, r.resolved.header.block_size, { slabBytes: 2 << 20, groupSize: 64, hbmLayout });
}

/** resident blocks as (bucket "layer:bits", arena offset) */
function resident(p: LoweredPlan): { initial: [string, number][]; final: [string, number][] } {
  const initial = p.initial.filter((x) => x.region === 'arena').map((x) => [`${x.layer}:${x.bits}`, x.offset] as [string, number]);
  const M = p.final.tier.length / 2;
  const final: [string, number][] = [];
  for (let i = 0; i < p.final.tier.length; i++) {
    if (p.final.tier[i] === 0) final.push([`${Math.floor(i / M)}:${p.final.bits[i]}`, p.final.slot[i]!]);
  }
  return { initial, final };
}

/** buckets whose offset span holds a block of another bucket */
function interleaved(blocks: [string, number][]): string[] {
  const span = new Map<string, [number, number]>();
  for (const [k, o] of blocks) {
    const s = span.get(k);
    span.set(k, s ? [Math.min(s[0], o), Math.max(s[1], o)] : [o, o]);
  }
  const bad = new Set<string>();
  for (const [k, o] of blocks) for (const [k2, [lo, hi]] of span) if (k2 !== k && o > lo && o < hi) bad.add(k2);
  return [...bad].sort();
}

describe('per-bit buckets of a SmartKV run', () => {
  it('every (layer, width) is one region: no block of another bucket inside it, at the start and at the end', () => {
    const b = resident(lowered('buckets'));
    const widths = new Set(b.final.map(([k]) => k.split(':')[1]));
    expect([...widths].sort()).toEqual(['16', '2', '3', '4', '8']);
    expect(interleaved(b.initial)).toEqual([]);
    expect(interleaved(b.final)).toEqual([]);
    // the shared slabs of the default layout do interleave layers (so the check above can fail)
    expect(interleaved(resident(lowered('slabs')).final)).not.toEqual([]);
  });

  it.skipIf(!host.available)('runs on the host backend with every block byte-exact (--verify)', async () => {
    const x = await hilRun(config, { backend: 'host', verify: true, seed: 5 });
    expect(x.hil.verify, x.hil.verify?.firstMismatch).toMatchObject({ mismatches: 0 });
    expect(x.hil.verify!.checked).toBeGreaterThan(20);
  });
});
