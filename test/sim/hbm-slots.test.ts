// The simulator's model of the HIL executor's HBM slots: the same placement as the executor's slab
// allocator for any sequence of allocations and frees, and, replayed with real policies, the copies
// the simulator charges for moves with HBM at one end equal the copies the executor's lowered plan
// issues for them, step by step.
import { describe, expect, it } from 'vitest';
import { SlabAllocator } from '../../hil/executor/slab-allocator.js';
import { PlanRecorder } from '../../hil/executor/plan-recorder.js';
import { allLinkKeys } from '../../hil/executor/link-keys.js';
import { lowerPlan } from '../../hil/executor/lower-plan.js';
import type { LowStep } from '../../hil/executor/lowered-plan.js';
import type { LayerWork, MoveBatch } from '../../sim/executor.js';
import { HbmSlots } from '../../sim/hbm-slots.js';
import { simulate } from '../../sim/run.js';
import { makeHilFixture } from '../hil/hil-fixtures.js';

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe('HBM slots', () => {
  it('place every slot where the executor\'s slab allocator does, over random allocations and frees of mixed sizes', () => {
    for (const seed of [1, 2, 3, 4]) {
      const rnd = lcg(seed);
      const a = new SlabAllocator(0, 64 << 10);
      const b = new HbmSlots(1, 1, 64 << 10);
      const live: number[] = [];
      for (let k = 0; k < 3000; k++) {
        if (live.length && rnd() < 0.45) {
          const off = live.splice(Math.floor(rnd() * live.length), 1)[0];
          a.free(off);
          b.free(off);
        } else {
          const size = [4096, 8192, 8192, 2560][Math.floor(rnd() * 4)];
          const x = a.alloc(size).offset;
          expect(b.alloc(size)).toBe(x);
          live.push(x);
        }
      }
    }
  });

  // blocks of 16 tokens fill their 4 KiB-aligned host slots (8 KiB), blocks of 20 do not (10 KiB in 12)
  const fixtures = [16, 20].map((blockSize) => ({ blockSize, fx: makeHilFixture(512, 12, blockSize) }));

  it('count the copies of promotions and demotions as the executor issues them', () => {
    for (const { blockSize, fx } of fixtures) {
      for (const policy of ['lru-offload', 'arc', 'quest', 'oracle', 'flexgen-static']) {
        for (const budget of ['5%', '10%', '25%']) {
          // per step: the runs the driver charged for moves with HBM at one end (not spills), by kind
          const { charged, steps } = recordCharged<Record<string, number>>(fx, policy, budget, () => ({}), {
            move: (c, b) => {
              if (b.reason !== 'spill' && (b.fromTier === 0) !== (b.toTier === 0) && b.fromBits === b.toBits) {
                const k = b.toTier === 0 ? 'in' : 'out';
                c[k] = (c[k] ?? 0) + b.runs;
              }
            },
          });
          steps.forEach((st, i) => {
            const issued: Record<string, number> = {};
            for (const label of copyLabels(st)) {
              if (!/^(promote|demote) /.test(label)) continue;
              const k = label.startsWith('promote') ? 'in' : 'out';
              issued[k] = (issued[k] ?? 0) + 1;
            }
            expect({ blockSize, policy, budget, step: i, ...charged[i] }).toEqual({ blockSize, policy, budget, step: i, ...issued });
          });
        }
      }
    }
  });

  it('count the copies of stages as the executor issues them: listed prefetches in a row one stage, consecutive 16-bit blocks one copy', () => {
    let staged = 0;
    for (const { blockSize, fx } of fixtures) {
      for (const policy of ['infinigen', 'quest', 'oracle', 'synapsevm']) {
        for (const budget of ['10%', '25%', '40%']) {
          // per step: the copies the driver charged for stages (listed blocks, or a tier's whole share of a layer)
          const { charged, steps } = recordCharged<{ n: number }>(fx, policy, budget, () => ({ n: 0 }), {
            stage: (c, b) => {
              c.n += b.runs;
            },
          });
          steps.forEach((st, i) => {
            const issued = copyLabels(st).filter((label) => label.startsWith('prefetch ')).length;
            staged += issued;
            expect({ blockSize, policy, budget, step: i, copies: charged[i].n }).toEqual({ blockSize, policy, budget, step: i, copies: issued });
          });
        }
      }
    }
    expect(staged).toBeGreaterThan(0);
  });

  it('count the copies of on-demand fetches as the executor issues them', () => {
    let fetched = 0;
    for (const { blockSize, fx } of fixtures) {
      for (const policy of ['lru-offload', 'synapsevm', 'quest', 'smartkv']) {
        for (const budget of ['10%', '25%']) {
          // per step: the runs the driver charged for the layers' fetches from host tiers
          const { charged, steps } = recordCharged<{ n: number }>(fx, policy, budget, () => ({ n: 0 }), {
            layer: (c, w) => {
              for (let t = 1; t < w.fetchRuns.length; t++) c.n += w.fetchRuns[t];
            },
          });
          steps.forEach((st, i) => {
            const issued = copyLabels(st).filter((label) => label.startsWith('fetch ')).length;
            fetched += issued;
            expect({ blockSize, policy, budget, step: i, copies: charged[i].n }).toEqual({ blockSize, policy, budget, step: i, copies: issued });
          });
        }
      }
    }
    expect(fetched).toBeGreaterThan(0);
  });
});

/**
 * A replay of the fixture recorded as the HIL plan, with a per-step tally of what the driver hands
 * the executor (`move`, `stage` and `layer` count into the step's tally), and the plan lowered as
 * the executor lowers it.
 */
function recordCharged<T>(
  fx: ReturnType<typeof makeHilFixture>,
  policy: string,
  budget: string,
  fresh: () => T,
  on: { move?: (tally: T, b: MoveBatch) => void; stage?: (tally: T, b: MoveBatch) => void; layer?: (tally: T, w: LayerWork) => void },
): { charged: T[]; steps: LowStep[] } {
  const charged: T[] = [];
  let rec: PlanRecorder | undefined;
  const r = simulate({ trace: fx.trace, policy, model: fx.model, hardware: 'h100-pcie5', hbm_budget: budget, group_size: 64 }, {
    executor: (resolved, cache) => {
      const x = new PlanRecorder(cache, allLinkKeys(resolved.hardware));
      const move = x.move.bind(x);
      const stage = x.stage.bind(x);
      const begin = x.beginStep.bind(x);
      x.beginStep = (step, ctx) => {
        charged.push(fresh());
        begin(step, ctx);
      };
      x.move = (b: MoveBatch) => {
        on.move?.(charged[charged.length - 1], b);
        return move(b);
      };
      x.stage = (b: MoveBatch) => {
        on.stage?.(charged[charged.length - 1], b);
        return stage(b);
      };
      const layer = x.layer.bind(x);
      x.layer = (w: LayerWork) => {
        on.layer?.(charged[charged.length - 1], w);
        layer(w);
      };
      rec = x;
      return x;
    },
  });
  const p = lowerPlan(rec!.plan, r.resolved.model, r.resolved.hardware, r.resolved.header.block_size, { slabBytes: 2 << 20, groupSize: 64 });
  return { charged, steps: p.steps };
}

/** per copy of a lowered step inside a memory-stream span, the span's label */
function copyLabels(st: LowStep): string[] {
  const labels: string[] = [];
  const spans = new Map(st.memSpans.map(([m0, m1, label]) => [m0, { m1, label }]));
  let cur: { m1: number; label: string } | undefined;
  for (const op of st.ops) {
    if (op.o === 'mark' && spans.has(op.id)) cur = spans.get(op.id);
    else if (op.o === 'mark' && cur && op.id === cur.m1) cur = undefined;
    else if (cur && op.o === 'copy') labels.push(cur.label);
  }
  return labels;
}
