/**
 * A staged copy holds a block as it was when staged (its tier and bits): the replay driver reads it at
 * the layer's attention only where the block is at that tier and those bits then, as the HIL executor's
 * staging does (hil/executor/lower-layer.ts); a block that moved after its stage and did not come back
 * is read anew from where it is.
 */
import { describe, expect, it } from 'vitest';
import type { Executor, LayerWork, StepTiming } from '../../sim/executor.js';
import { KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver } from '../../sim/replay-driver.js';
import type { Actions, Policy } from '../../policies/policy.js';
import { denseSteps, tinyHeader, tinyModel } from '../helpers/tiny.js';

class Works implements Executor<number> {
  readonly kind = 'sim' as const;
  readonly usesSpread = false;
  works: { step: number; fetchRuns: number[]; fetchBytes: number[] }[] = [];
  beginStep(): void {}
  move(): number {
    return 0;
  }
  stage(): number {
    return 0;
  }
  layer(w: LayerWork): void {
    this.works.push({ step: w.step, fetchRuns: [...w.fetchRuns], fetchBytes: [...w.fetchBytes] });
  }
  endStep(): StepTiming {
    return { latency_us: 0, compute_us: 0, stall_us: 0, transfer_us: 0, bytes: {} };
  }
  finish(): Record<string, number> {
    return {};
  }
}

// one layer, 40 blocks of 4 tokens; after prefill DRAM holds 1 2 9 30 31 (16 bits)
function replay(step0: (a: Actions) => void, step1: (a: Actions) => void): Works['works'] {
  const h = tinyHeader(160, 2, 1);
  const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
  const cache = new KVCache(tinyModel, 4, 1, 44, [
    { name: 'hbm', capacityBytes: 64 * 60 },
    { name: 'dram', capacityBytes: 1e9 },
    { name: 'nvme', capacityBytes: 1e9 },
  ]);
  const policy: Policy = {
    name: 'scripted',
    decide(v, a) {
      if (v.step < 0) {
        if (v.nBlocks < 40) return;
        for (const b of [1, 2, 9, 30, 31]) a.demote(0, b, 'dram', 16);
      } else if (v.step === 0) step0(a);
      else step1(a);
    },
    observe() {},
  };
  const ex = new Works();
  new ReplayDriver(h, cache, policy, ex, 60).run(trace, () => undefined);
  return ex.works;
}

describe('staged blocks that move before their attention', () => {
  const B16 = tinyModel.kv_heads * 4 * tinyModel.head_dim * 2 * 2; // one 16-bit block of the tiny model
  it('bulk-staged: a block back at its staged tier and bits reads the staged copy; one elsewhere is read anew', () => {
    const works = replay(
      (a) => {
        a.prefetchOffloaded(0);
        // 1: to HBM and back to DRAM at 16 bits (its staged copy holds it); 9: to NVMe (read from there)
        a.promote(0, 1);
        a.demote(0, 1, 'dram', 16);
        a.demote(0, 9, 'nvme', 16);
      },
      () => {},
    );
    expect(works[0]).toEqual({ step: 0, fetchRuns: [0, 0, 1], fetchBytes: [0, 0, B16] });
    // step 1 stages nothing: every offloaded block is read, DRAM 1 2 | 30 31, NVMe 9
    expect(works[1]).toEqual({ step: 1, fetchRuns: [0, 2, 1], fetchBytes: [0, 4 * B16, B16] });
  });

  it('staged one by one: a block moved to another tier after its stage is read from there', () => {
    const works = replay(
      () => {},
      (a) => {
        a.prefetch(0, 30);
        a.prefetch(0, 31);
        a.demote(0, 30, 'nvme', 16);
      },
    );
    // DRAM 1 2 | 9 read (31 staged), NVMe 30 read
    expect(works[1]).toEqual({ step: 1, fetchRuns: [0, 2, 1], fetchBytes: [0, 3 * B16, B16] });
  });
});
