import { describe, expect, it } from 'vitest';
import { KVCache } from '../../sim/kv-cache.js';
import { ReplayDriver, type StepResult } from '../../sim/replay-driver.js';
import { SimExecutor, type CopyMode } from '../../sim/sim-executor.js';
import type { Actions, Policy, PolicyView } from '../../policies/policy.js';
import { h2o } from '../../policies/h2o.js';
import { streamingLlm } from '../../policies/streaming-llm.js';
import { denseSteps, tinyHardware, tinyHeader, tinyModel } from '../helpers/tiny.js';

function replay(policy: Policy, budgetBlocks: number, prompt = 8, steps = 2, massOf = (_s: number, _l: number, n: number) => Array(n).fill(1 / n), copyMode?: CopyMode) {
  const h = tinyHeader(prompt, steps);
  const trace = denseSteps(h, massOf);
  const maxBlocks = trace[trace.length - 1].layers[0].nBlocks;
  const cache = new KVCache(tinyModel, 4, 2, maxBlocks, [
    { name: 'hbm', capacityBytes: 2 * 64 * budgetBlocks },
    { name: 'dram', capacityBytes: 1e9 },
    { name: 'nvme', capacityBytes: 1e9 },
  ]);
  const ex = new SimExecutor(tinyHardware(), tinyModel, { traceSteps: 100, copyMode });
  const driver = new ReplayDriver(h, cache, policy, ex, budgetBlocks);
  const results: StepResult[] = [];
  driver.run(trace, (r) => results.push(r));
  cache.audit();
  return { results, cache, ex, driver };
}

const scripted = (fn: (v: PolicyView, a: Actions) => void): Policy => ({ name: 'scripted', decide: fn, observe: () => undefined });

describe('ReplayDriver + SimExecutor timelines (tiny machine: 64 B blocks, 1 B/us)', () => {
  it('all resident: each layer is attention (blocks x 64 us) + linear (1000 us)', () => {
    const { results } = replay(scripted(() => undefined), 10);
    // prompt 8 tokens = 2 blocks; step 0 context 9 -> 3 blocks; step 1 context 10 -> 3 blocks
    expect(results.map((r) => r.timing.latency_us)).toEqual([2 * (192 + 1000), 2 * (192 + 1000)]);
    expect(results.map((r) => r.timing.stall_us)).toEqual([0, 0]);
    expect(results[0].recall).toEqual(Float64Array.from([1, 1]));
  });

  it('an offloaded block is fetched on demand: the compute stream stalls for alpha + bytes/beta', () => {
    const policy = scripted((v, a) => {
      if (v.step === 0 && v.layer === 0) a.demote(0, 0, 'dram', 16);
    });
    const { results, ex } = replay(policy, 10);
    // step 0, layer 0: the demote (D2H 64 B, 10 + 64 = 74 us) and then the fetch (H2D 64 B, 74 us) run
    // on the ONE memory stream (as on the hardware: the HIL issues both directions on one CUDA stream),
    // so the fetch ends at 148 and the attention over 3 blocks waits for it.
    // layer 0: 148 stall + 192 + 1000; layer 1: 192 + 1000 -> 2532 (with separate H2D/D2H streams: 2458)
    expect(results[0].timing.latency_us).toBe(2532);
    expect(results[0].timing.stall_us).toBe(148);
    // the demote (D2H, 74 us) and the fetch (H2D, 74 us) both count as transfer time
    expect(results[0].timing.transfer_us).toBe(148);
    expect(results[0].timing.bytes).toEqual({ 'pcie:hbm->dram': 64, 'pcie:dram->hbm': 64, 'nvme:dram->nvme': 0, 'nvme:nvme->dram': 0 });
    // step 1 fetches again, with no demote ahead of it on the memory stream: 74 stall, 74 + 2 x 1192 = 2458
    expect(results[1].timing.latency_us).toBe(2458);
    expect(results[1].timing.stall_us).toBe(74);
    const names = ex.spans.filter((s) => s.stream === 'compute').map((s) => `${s.name}@${s.start}`);
    expect(names.slice(0, 4)).toEqual(['attention@148', 'linear@340', 'attention@1340', 'linear@1532']);
  });

  it('copies cost one alpha per contiguous run of blocks, as the hardware issues them', () => {
    // blocks 0 and 2 (not adjacent): the demote D2H is one copy per block from HBM slab slots
    // (2 x 10 + 128 B = 148 us); the fetch into staging is one copy per run of consecutive host slots,
    // here 2 runs (2 x 10 + 128 = 148 us), queued after the demote on the memory stream: stall 296.
    const apart = replay(scripted((v, a) => {
      if (v.step === 0 && v.layer === 0) {
        a.demote(0, 0, 'dram', 16);
        a.demote(0, 2, 'dram', 16);
      }
    }), 10, 12, 1);
    expect(apart.results[0].timing.stall_us).toBe(296);
    expect(apart.results[0].timing.latency_us).toBe(296 + 256 + 1000 + 256 + 1000);
    // blocks 0 and 1 (adjacent host slots): the demote is still 2 copies (148 us) but the fetch is one
    // run: 10 + 128 = 138 us -> stall 286
    const together = replay(scripted((v, a) => {
      if (v.step === 0 && v.layer === 0) {
        a.demote(0, 0, 'dram', 16);
        a.demote(0, 1, 'dram', 16);
      }
    }), 10, 12, 1);
    expect(together.results[0].timing.stall_us).toBe(286);
    // the 'gather' what-if: one copy per batch on PCIe -> demote 10 + 128 = 138, fetch 138: stall 276
    const gathered = replay(scripted((v, a) => {
      if (v.step === 0 && v.layer === 0) {
        a.demote(0, 0, 'dram', 16);
        a.demote(0, 2, 'dram', 16);
      }
    }), 10, 12, 1, undefined, 'gather');
    expect(gathered.results[0].timing.stall_us).toBe(276);
  });

  it('an NVMe block moves through its DRAM slot: a file request leg and a PCIe copy leg', () => {
    // demote block 0 to NVMe: D2H into the DRAM slot on the memory stream (10 + 64 = 74 us), then a
    // file write on the host I/O stream (64 B at 0.5 B/us = 128 us): 74..202. The fetch for attention:
    // a file read queued behind the write on the host stream (202..330), then the H2D copy on the
    // memory stream (330..404). Stall 404; layer 0 = 404 + 192 + 1000, layer 1 = 192 + 1000.
    const { results, ex } = replay(scripted((v, a) => {
      if (v.step === 0 && v.layer === 0) a.demote(0, 0, 'nvme', 16);
    }), 10, 8, 1);
    expect(results[0].timing.stall_us).toBe(404);
    expect(results[0].timing.latency_us).toBe(404 + 1192 + 1192);
    const host = ex.spans.filter((s) => s.stream === 'host-io').map((s) => [s.start, s.end]);
    expect(host).toEqual([[74, 202], [202, 330]]);
    expect(results[0].timing.bytes['nvme:dram->nvme']).toBe(64);
    expect(results[0].timing.bytes['nvme:nvme->dram']).toBe(64);
  });

  it('prefetching one layer ahead hides the fetch behind compute (no stall in the next step)', () => {
    const policy = scripted((v, a) => {
      if (v.step === 0 && v.layer === 0) a.demote(0, 0, 'dram', 16);
      if (v.layer === 1) a.prefetchOffloaded(0);
    });
    const { results } = replay(policy, 10);
    // step 0 layer 0: demote then fetch on the one memory stream (74 + 74 us, see above)
    expect(results[0].timing.stall_us).toBe(148);
    // the stage for step 1 layer 0 was issued at step 0 layer 1 (t=1340) and finished at 1414
    expect(results[1].timing.stall_us).toBe(0);
    expect(results[1].timing.latency_us).toBe(2 * (192 + 1000));
  });

  it('a block demoted after its layer was staged has no staged copy: it is fetched, whatever a promotion freed', () => {
    // step 0 as above, and layer 1 stages layer 0's offloaded block 0 for step 1. Step 1, layer 0: block 0
    // (staged) is promoted and block 1 demoted: DRAM holds as many bytes as were staged, but block 1 has
    // no staged copy, so the attention waits for its fetch (as the HIL executor lowers it). Memory stream
    // from 2532: promote 74, demote 74, fetch 74 -> stall 222; then 2 x (192 + 1000).
    const policy = scripted((v, a) => {
      if (v.step === 0 && v.layer === 0) a.demote(0, 0, 'dram', 16);
      if (v.step === 1 && v.layer === 0) {
        a.promote(0, 0);
        a.demote(0, 1, 'dram', 16);
      }
      if (v.layer === 1) a.prefetchOffloaded(0);
    });
    const { results } = replay(policy, 10);
    expect(results[0].timing.latency_us).toBe(2532);
    expect(results[1].timing.stall_us).toBe(222);
    expect(results[1].timing.latency_us).toBe(222 + 2 * (192 + 1000));
    // H2D: the promote, the fetch and layer 1's stage for the next step; D2H: the demote
    expect(results[1].timing.bytes['pcie:dram->hbm']).toBe(192);
    expect(results[1].timing.bytes['pcie:hbm->dram']).toBe(64);
  });

  it('a demotion that would overflow the destination is refused and counted, nothing changes', () => {
    const policy = scripted((v, a) => {
      if (v.step === 0 && v.layer === 0) {
        expect(a.demote(0, 0, 'hbm', 16)).toBe(false); // not below its place
        expect(a.demote(0, 9, 'dram', 16)).toBe(false); // no such block
        expect(a.evict(0, 1)).toBe(true);
        expect(a.evict(0, 1)).toBe(false); // already gone
        expect(a.demote(0, 0, 'floppy', 16)).toBe(false);
      }
    });
    const { driver, cache } = replay(policy, 10);
    expect(driver.counters.refused).toEqual({ demote: 3, evict: 1 });
    expect(driver.counters.actions).toEqual({ evict: 1 });
    expect(cache.live(0)).toBe(2);
    expect(cache.live(1)).toBe(3);
  });

  it('H2O keeps sinks + window + heavy hitters within the budget and drops the lowest score, not the oldest', () => {
    // budget 4 blocks/layer: recent window round(4 * 0.5) = 2 blocks, heavy part 2 (sink block 0 + 1).
    // prompt 16 tokens = 4 blocks; step 0 creates block 4 (context 17). Candidates: blocks 1, 2.
    // block 1 is heavy (0.5), block 2 light (0.1): block 2 goes although block 1 is older.
    const massOf = (_s: number, _l: number, n: number) => (n === 5 ? [0.2, 0.5, 0.1, 0.1, 0.1] : [0.2, 0.5, 0.1, 0.2]);
    const policy = h2o.create({ heavy_ratio: 0.5, sink_tokens: 4 }, { layers: 2, maxBlocks: 5, blockSize: 4, budgetBlocks: 4, header: { kv_groups: 1 } } as never);
    const { cache, results } = replay(policy, 4, 16, 3, massOf);
    for (const l of [0, 1]) expect([0, 1, 2, 3, 4].map((b) => cache.tierOf(l, b))).toEqual([0, 0, -2, 0, 0]);
    // recall at step 0 misses block 2's 0.1
    expect(results[0].recall[0]).toBeCloseTo(0.9, 6);
    expect(results[2].recall[1]).toBeCloseTo(0.9, 6);
  });

  it('StreamingLLM never evicts the sinks and keeps the newest blocks', () => {
    const policy = streamingLlm.create({ sink_tokens: 4 }, { layers: 2, maxBlocks: 8, blockSize: 4, budgetBlocks: 3 } as never);
    const { cache } = replay(policy, 3, 8, 20);
    // final context 28 tokens = 7 blocks; live: sink block 0 + blocks 5, 6
    for (const l of [0, 1]) expect([0, 1, 2, 3, 4, 5, 6].map((b) => cache.tierOf(l, b) >= 0)).toEqual([true, false, false, false, false, true, true]);
  });
});
