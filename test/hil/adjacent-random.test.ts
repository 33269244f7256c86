// Random scripted policies against the lowered HIL plan: the adjacent copies the simulator counts
// (the replay driver's for stages and fetches, the executor's for moves into HBM at the same bits) equal
// the copies the plan issues from the host slot right after the previous copy's, per step and kind of
// batch, and so do the promotions' other copies. The policies stage (a bulk stage first, single and
// listed prefetches), move (promotions, demotions with requantization, evictions) and skip, in host
// slots that FP16 blocks fill (so that they join) or pad, with the driver's fast paths on and off and
// HBM slots placed as the simulator places them. Two older differences, which the spread count shares,
// are kept out: a block moved twice in one decision (the plan recorder orders its moves in rounds,
// splitting the batch) and a layer's later bulk stage (the HIL copies every block of the tier, the
// driver only those not staged yet).
import { describe, expect, it } from 'vitest';
import { lowerPlan } from '../../hil/executor/lower-plan.js';
import type { LoweredPlan } from '../../hil/executor/lowered-plan.js';
import { PlanRecorder } from '../../hil/executor/plan-recorder.js';
import type { LayerWork, MoveBatch } from '../../sim/executor.js';
import { adjacentCopies } from '../../sim/host-spread.js';
import { HbmSlots } from '../../sim/hbm-slots.js';
import { HOST_SLOT_ALIGN, KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver } from '../../sim/replay-driver.js';
import type { Actions, Policy } from '../../policies/policy.js';
import { denseSteps, tinyHardware, tinyHeader, tinyModel } from '../helpers/tiny.js';

/** the plan recorder, asked for the spread counts, summing the adjacent copies per step and kind */
class AdjacentCount extends PlanRecorder {
  readonly usesSpread = true;
  readonly counts = new Map<string, number>();
  private step = -1;
  private add(kind: string, n: number): void {
    const k = `${this.step} ${kind}`;
    this.counts.set(k, (this.counts.get(k) ?? 0) + n);
  }
  override beginStep(step: number, contextTokens: number): void {
    this.step = step;
    super.beginStep(step, contextTokens);
  }
  override stage(b: MoveBatch): number {
    this.add('prefetch', b.adjacent ?? 0);
    return super.stage(b);
  }
  override move(b: MoveBatch): number {
    if (b.toTier === 0 && b.fromBits === b.toBits) {
      const adjacent = Math.max(0, adjacentCopies(b.blocks) - (b.blocks.length - Math.max(1, b.runs)));
      this.add(b.reason, adjacent);
      this.add(`${b.reason} others`, Math.max(1, b.runs) - adjacent);
    }
    return super.move(b);
  }
  override layer(w: LayerWork): void {
    this.add('fetch', (w.fetchAdjacent ?? []).reduce((a, x) => a + x, 0));
    super.layer(w);
  }
}

/** per step and kind of batch (its label's first word), the plan's copies into HBM from the host slot right after the previous copy's */
function issued(p: LoweredPlan, kinds: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of p.steps) {
    const at = new Map<number, number>();
    s.ops.forEach((op, i) => op.o === 'mark' && at.set(op.id, i));
    for (const [m0, m1, label] of s.memSpans) {
      const kind = label.split(' ')[0];
      if (!kinds.includes(kind) || / \+ /.test(label)) continue;
      let prev = -1;
      let n = 0;
      let copies = 0;
      for (const op of s.ops.slice(at.get(m0)! + 1, at.get(m1)!)) {
        if (op.o !== 'copy' || op.dst !== 'arena' || op.src === 'arena') continue;
        const first = Math.floor(op.srcOff / p.slotBytes);
        if (prev >= 0 && first === prev + 1) n++;
        prev = Math.floor((op.srcOff + op.bytes - 1) / p.slotBytes);
        copies++;
      }
      const k = `${s.step} ${kind}`;
      out.set(k, (out.get(k) ?? 0) + n);
      if (kind === 'promote') out.set(`${k} others`, (out.get(`${k} others`) ?? 0) + copies - n);
    }
  }
  return out;
}

/** a linear congruential generator (deterministic per seed) */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const BITS = [16, 8, 4];

/** 4-token blocks of 64 bytes (FP16), each in a 4 KiB host slot (no two blocks join), or of 4,096 bytes (they fill their slots: FP16 neighbours join) */
const PADDED = tinyModel;
const FULL = { ...tinyModel, hidden: 128, q_heads: 2, kv_heads: 2, head_dim: 128 };
/** the quantization group: 4 in the padded geometry (its head_dim), 32 in the full one (an INT8 block of 2,048 values and 64 scales stays below its 4 KiB slot) */
const groupSize = (m: typeof tinyModel) => Math.min(32, m.head_dim);

function run(seed: number, fastPaths: boolean, model = PADDED): { sim: Map<string, number>; plan: Map<string, number> } {
  const L = 2;
  const steps = 10;
  const h = tinyHeader(64, steps, L);
  const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
  const blockBytes = 4 * model.kv_heads * model.head_dim * 4;
  const cache = new KVCache(model, 4, L, Math.ceil((64 + steps) / 4) + 1, [
    { name: 'hbm', capacityBytes: blockBytes * 30 },
    { name: 'dram', capacityBytes: 1e9 },
  ], groupSize(model), HOST_SLOT_ALIGN);
  const r = random(seed);
  const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)];
  const policy: Policy = {
    name: 'random',
    decide(v, a: Actions) {
      if (v.step < 0) {
        if (v.nBlocks < 16) return;
        for (let b = 0; b < 16; b++) if (r() < 0.6) a.demote(v.layer, b, 'dram', pick(BITS));
        return;
      }
      const l = v.layer;
      const n = cache.created[l];
      // a bulk stage only as the layer's first stage of the step
      if (r() < 0.3) a.prefetchOffloaded(l);
      else {
        const k = Math.floor(r() * 4);
        for (let j = 0; j < k; j++) {
          const at = Math.floor(r() * n);
          const list = Array.from({ length: 1 + Math.floor(r() * 5) }, (_, i) => Math.min(n - 1, at + i + (r() < 0.3 ? 1 : 0))).filter((x, i, xs) => i === 0 || x > xs[i - 1]);
          if (r() < 0.5) a.prefetch(l, list[0]);
          else a.prefetchBlocks!(l, list, 0, list.length);
        }
      }
      // (each block moved once in a decision)
      const moved = new Set<number>();
      const k = Math.floor(r() * 8);
      for (let j = 0; j < k; j++) {
        const b = Math.floor(r() * n);
        const at = Math.floor(r() * n);
        const list = Array.from({ length: 1 + Math.floor(r() * 5) }, (_, i) => Math.min(n - 1, at + i + (r() < 0.3 ? 1 : 0))).filter((x, i, xs) => (i === 0 || x > xs[i - 1]) && !moved.has(x));
        const x = r();
        const offloaded = list.filter((y) => cache.tierOf(l, y) === 1);
        const one = !moved.has(b);
        for (const y of [b, ...list]) moved.add(y);
        if (x < 0.2) {
          if (one) a.promote(l, b);
        } else if (x < 0.45) {
          if (one) a.demote(l, b, 'dram', pick(BITS));
        } else if (x < 0.6) a.demoteBlocks!(l, list, 0, list.length, 'dram', pick(BITS));
        else if (x < 0.85) a.promoteBlocks!(l, offloaded, 0, offloaded.length);
        else if (x < 0.9) a.evict(l, b);
        else a.skip(b);
      }
    },
    observe() {},
  };
  const ex = new AdjacentCount(cache, []);
  const d = new ReplayDriver(h, cache, policy, ex, 30);
  d.fastPaths = fastPaths;
  d.hbmSlots = new HbmSlots(L, cache.maxBlocks);
  d.run(trace, () => undefined);
  const plan = lowerPlan(ex.plan, model, tinyHardware(), 4, { slabBytes: 2 << 20, groupSize: groupSize(model) });

  return { sim: ex.counts, plan: issued(plan, ['prefetch', 'fetch', 'promote']) };
}

describe('adjacent copies, random policies, against the lowered plan', () => {
  for (const [fastPaths, model, name] of [
    [true, PADDED, 'padded slots'],
    [false, PADDED, 'padded slots'],
    [true, FULL, 'full slots'],
    [false, FULL, 'full slots'],
  ] as const) {
    it(`fast paths ${fastPaths ? 'on' : 'off'}, ${name}`, () => {
      const bad: string[] = [];
      // per kind, the plan's count over every seed (each kind must be seen)
      const seen = new Map<string, number>();
      for (let seed = 1; seed <= 150; seed++) {
        const { sim, plan } = run(seed, fastPaths, model);
        for (const k of new Set([...sim.keys(), ...plan.keys()])) {
          const s = sim.get(k) ?? 0;
          const p = plan.get(k) ?? 0;
          const kind = k.slice(k.indexOf(' ') + 1);
          seen.set(kind, (seen.get(kind) ?? 0) + p);
          if (s !== p) bad.push(`seed ${seed} step/kind ${k}: simulator ${s}, plan ${p}`);
        }
      }
      expect(bad.slice(0, 10)).toEqual([]);
      for (const kind of ['prefetch', 'fetch', 'promote', 'promote others']) expect(seen.get(kind) ?? 0, kind).toBeGreaterThan(20);
    });
  }
});

