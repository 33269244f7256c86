/**
 * The replay driver's shortcuts for a layer's staged and fetched bytes (ReplayDriver.fastPaths): with
 * every lower tier bulk-staged, from the blocks moved or created since the layer's last attention;
 * with blocks staged one by one, from the staged list. Random scripted policies (moves between HBM,
 * DRAM and NVMe at 16 and 8 bits, bulk stages of the layer before or after its moves, single stages,
 * some steps attending all blocks and others skipping) must give every LayerWork the same staged bytes,
 * fetch bytes and fetch runs with the shortcuts as counted block by block. (Over these seeds the
 * bulk-staged shortcut answers ~470 layers and the staged-list one ~670; the bulk-staged one only
 * where a single lower tier holds the layer's blocks, hence the seeds without NVMe.)
 */
import { describe, expect, it } from 'vitest';
import type { Executor, LayerWork, StepTiming } from '../../sim/executor.js';
import { makeRng } from '../../hil/rng.js';
import { KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver } from '../../sim/replay-driver.js';
import type { Policy } from '../../policies/policy.js';
import { denseSteps, tinyHeader, tinyModel } from '../helpers/tiny.js';

class Works implements Executor<number> {
  readonly kind = 'sim' as const;
  works: string[] = [];
  beginStep(): void {}
  move(): number {
    return 0;
  }
  stage(): number {
    return 0;
  }
  layer(w: LayerWork): void {
    this.works.push(`${w.step}/${w.layer}: staged ${w.stagedBytes} fetch ${w.fetchBytes.join(',')} runs ${w.fetchRuns.join(',')}`);
  }
  endStep(): StepTiming {
    return { latency_us: 0, compute_us: 0, stall_us: 0, transfer_us: 0, bytes: {} };
  }
  finish(): Record<string, number> {
    return {};
  }
}

/** one step's script per (step, layer), drawn once so that both runs make the same calls */
function scripted(seed: number): Policy {
  const scripts = new Map<string, (v: Parameters<Policy['decide']>[0], a: Parameters<Policy['decide']>[1]) => void>();
  const r = makeRng(seed).next;
  return {
    name: 'scripted',
    decide(v, a) {
      const key = `${v.step}/${v.layer}`;
      let s = scripts.get(key);
      if (!s) {
        const n = v.nBlocks;
        const moves = Array.from({ length: Math.floor(r() * 6) }, () => ({ b: Math.floor(r() * n), kind: seed % 2 === 1 ? Math.floor(r() * 4) : [0, 2, 3][Math.floor(r() * 3)] }));
        // (a run of neighbours moved to one tier at one precision, so that fetches continue runs)
        const b0 = Math.floor(r() * n);
        const kind = r() < 0.5 ? 0 : 2;
        for (let b = b0, e = Math.min(n, b0 + 1 + Math.floor(r() * 4)); b < e; b++) moves.push({ b, kind });
        const stageWhen = Math.floor(r() * 5); // 0 and 4 before the moves, 1 after, 2 single stages, 3 none
        const singles = Array.from({ length: 1 + Math.floor(r() * 3) }, () => Math.floor(r() * n));
        const skips = r() < 0.15 ? [Math.floor(r() * n)] : [];
        s = (view, act) => {
          const l = view.layer;
          // (after the prompt, DRAM holds blocks of each layer; with odd seeds NVMe too)
          if (view.step < 0) for (const b of [1, 2, 3]) act.demote(l, b, 'dram', 16);
          if (view.step < 0 && seed % 2 === 1) act.demote(l, 4, 'nvme', 16);
          if (stageWhen === 0 || stageWhen === 4) act.prefetchOffloaded(l);
          for (const m of moves) {
            if (m.kind === 0) act.demote(l, m.b, 'dram', 16);
            else if (m.kind === 1) act.demote(l, m.b, 'nvme', 16);
            else if (m.kind === 2) act.demote(l, m.b, 'dram', 8);
            else act.promote(l, m.b);
          }
          if (stageWhen === 1) act.prefetchOffloaded(l);
          if (stageWhen === 2) for (const b of singles) act.prefetch(l, b);
          for (const b of skips) act.skip(b);
        };
        scripts.set(key, s);
      }
      s(v, a);
    },
    observe() {},
  };
}

function run(seed: number, fastPaths: boolean): string[] {
  const h = tinyHeader(40, 24, 2);
  const trace = denseSteps(h, (_s, _l, n) => Array(n).fill(1 / n));
  const cache = new KVCache(tinyModel, 4, 2, 17, [
    { name: 'hbm', capacityBytes: 64 * 2 * 9 },
    { name: 'dram', capacityBytes: 1e9 },
    { name: 'nvme', capacityBytes: 1e9 },
  ]);
  const ex = new Works();
  const driver = new ReplayDriver(h, cache, scripted(seed), ex, 9);
  driver.fastPaths = fastPaths;
  driver.run(trace, () => undefined);
  return ex.works;
}

describe('ReplayDriver: staged and fetched bytes by the shortcuts and block by block', () => {
  it('the same LayerWork counts over random scripted policies', () => {
    let differ = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const fast = run(seed, true);
      const plain = run(seed, false);
      expect(fast, `seed ${seed}`).toEqual(plain);
      expect(fast.length).toBe(24 * 2);
      differ += fast.some((w) => /fetch 0,[1-9]/.test(w) || /fetch 0,\d+,[1-9]/.test(w)) ? 1 : 0;
    }
    // (most runs fetch something on demand, so the counts compared are not all zero)
    expect(differ).toBeGreaterThan(30);
  });
});
