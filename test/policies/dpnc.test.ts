import { describe, expect, it } from 'vitest';
import { dpnc } from '../../policies/dpnc.js';
import { energyOf } from '../../sim/quality/energy-model.js';
import { replayPolicy } from './harness.js';

describe('dpnc (demand-paged tiers)', () => {
  // one layer, prompt 16 = blocks 0..3, block 4 at step 0; budget 2 pages; DRAM quota 2 (tiny machine: hbm, dram, nvme).
  // value = importance / max x 1 / (1 + age); uses: mass >= 0.5 x row max.
  const m0 = [0.5, 0.1, 0.3, 0.05, 0.05];
  const m1 = [0.3, 0.05, 0.6, 0, 0.05];
  const r = replayPolicy(dpnc, 2, {
    prompt: 16,
    steps: 2,
    layers: 1,
    massOf: (s) => (s === 0 ? m0 : m1),
    options: { use_threshold: 0.5, dram_factor: 1, cxl_factor: 1, ssd_factor: 1, page_in: 1, age_steps: 100, low_importance: 0, demote_max: 0 },
  });

  it('evicts by weighted LRU x importance and pushes DRAM overflow down the chain', () => {
    // prefill values: 0: 1, 1: 0.1, 2: 0.6, 3: 0.05 -> 3 and 1 go to DRAM
    expect(r.acts('demote:dram:16', -1)).toEqual(['0:1', '0:3']);
    // step 0: block 4 needs room -> 2 (0.6 < 1) to DRAM; DRAM holds 3 > 2 -> its lowest (3) one tier down
    expect(r.acts('demote:dram:16', 0)).toEqual(['0:2']);
    expect(r.acts('demote:nvme:16', 0)).toEqual(['0:3']); // the tiny machine has no CXL: DRAM -> SSD
    expect(r.acts('skip', 0)).toEqual(['0:1', '0:2', '0:3']);
  });

  it('pages in on recent access / high importance, replacing a page worth less', () => {
    // step 1: 2 (used at its last attendance, importance 0.3) beats resident 4 (0.05, never used)
    expect(r.acts('demote:dram:16', 1)).toEqual(['0:4']);
    expect(r.acts('promote', 1)).toEqual(['0:2']);
    expect(r.acts('skip', 1)).toEqual(['0:1', '0:3', '0:4']);
    expect(r.tiers(0)).toEqual([0, 1, 0, 2, 1]);
    expect(r.results.map((x) => x.recall[0])).toEqual([0.55, 0.9].map((v) => expect.closeTo(v, 6)));
  });
});

describe('energy model', () => {
  it('charges bytes read and written per tier plus idle power of the tiers in use', () => {
    const e = energyOf({ 'pcie:hbm->dram': 1e9, 'sata:dram->hdd': 1e6, 'nvme:dram->nvme': 0 }, { hbm: 'hbm', dram: 'dram', hdd: 'hdd', nvme: 'nvme' }, ['hbm', 'dram'], 2, 4);
    expect(e.by_tier.hbm.dynamic_J).toBeCloseTo(1e9 * 31e-12, 12);
    expect(e.by_tier.dram.dynamic_J).toBeCloseTo(1e9 * 120e-12 + 1e6 * 120e-12, 12);
    expect(e.by_tier.hdd.dynamic_J).toBeCloseTo(1e6 * 37000e-12, 12);
    expect(e.by_tier.dram.idle_J).toBe(6);
    expect(e.by_tier.nvme).toBeUndefined();
    expect(e.joules_per_token).toBeCloseTo(e.joules_total / 4, 12);
  });
});
