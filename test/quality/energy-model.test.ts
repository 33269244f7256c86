import { describe, expect, it } from 'vitest';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { GiB } from '../../sim/hardware/profile.js';
import { ENERGY_CONSTANTS, energyOf, gpuPowerOf } from '../../sim/quality/energy-model.js';

describe('energy model, a hand-computed run', () => {
  // h100-pcie5-nvme4: DRAM 215/184 GB/s, NVMe Gen4 6.2/3.7 GB/s, HDD 0.19 GB/s. 2 s run, 0.5 s of kernels, 4 tokens.
  const hardware = loadHardware('h100-pcie5-nvme4');
  const e = energyOf({
    hardware,
    linkBytes: { 'pcie:hbm->dram': 1e9, 'pcie:dram->hbm': 2e9, 'nvme:dram->nvme': 3.7e9, 'nvme:nvme->dram': 0, 'sata:dram->hdd': 0.19e9 },
    peakBytes: { hbm: 5e9, dram: 2 * GiB, cxl: 0, nvme: 3.7e9, hdd: 0.19e9 },
    seconds: 2,
    gpuBusySeconds: 0.5,
    tokens: 4,
  });

  it('GPU: busy power x kernel time + idle power x the rest (H100: 364 W measured busy, 71 W idle)', () => {
    expect(e.gpu).toEqual({ model: 'H100', busy_J: 364 * 0.5, idle_J: 71 * 1.5 });
  });

  it('links: 40 pJ per byte carried', () => {
    expect(e.links_J.pcie).toBeCloseTo(3e9 * 40e-12, 12); // 0.12 J
    expect(e.links_J.nvme).toBeCloseTo(3.7e9 * 40e-12, 12); // 0.148 J
    expect(e.links_J.sata).toBeCloseTo(0.19e9 * 40e-12, 12); // 0.0076 J
  });

  it('DRAM: 120 pJ per byte read or written + 0.06 W per GiB held, for the run', () => {
    // written 1e9 (from HBM), read 2e9 (to HBM) + 3.7e9 (to NVMe) + 0.19e9 (to HDD)
    expect(e.by_tier.dram.active_J).toBeCloseTo((1e9 + 2e9 + 3.7e9 + 0.19e9) * 120e-12, 12); // 0.8268 J
    expect(e.by_tier.dram.idle_J).toBeCloseTo(0.06 * 2 * 2, 12); // 0.24 J
    expect(e.by_tier.cxl).toBeUndefined(); // held nothing, moved nothing
  });

  it('storage: active power while transferring at its own rate, idle power the rest', () => {
    // NVMe wrote 3.7e9 B at 3.7 GB/s: 1 s at 12 W, 1 s at 5 W; HDD wrote 0.19e9 B at 0.19 GB/s: 1 s at 8 W, 1 s at 5.4 W
    expect(e.by_tier.nvme).toEqual({ active_J: expect.closeTo(12, 9), idle_J: expect.closeTo(5, 9) });
    expect(e.by_tier.hdd).toEqual({ active_J: expect.closeTo(8, 9), idle_J: expect.closeTo(5.4, 9) });
    expect(e.by_tier.hbm).toBeUndefined(); // inside the GPU's power
  });

  it('totals and joules per token', () => {
    const total = 182 + 106.5 + 0.12 + 0.148 + 0.0076 + 0.8268 + 0.24 + 17 + 13.4;
    expect(e.joules_total).toBeCloseTo(total, 9); // 320.2424 J
    expect(e.joules_per_token).toBeCloseTo(total / 4, 9); // 80.0606 J
    expect(e.note).toBeUndefined();
  });

  it('caps activity at the run: a transfer longer than the run is active for the whole run', () => {
    const busy = energyOf({ hardware, linkBytes: { 'nvme:dram->nvme': 37e9 }, peakBytes: {}, seconds: 2, gpuBusySeconds: 5, tokens: 1 });
    expect(busy.by_tier.nvme).toEqual({ active_J: 24, idle_J: 0 });
    expect(busy.gpu.busy_J).toBe(364 * 2);
    expect(busy.gpu.idle_J).toBe(0);
  });
});

describe('energy constants', () => {
  it('find the GPU by name and say when none fits', () => {
    expect(gpuPowerOf('NVIDIA H100 80GB HBM3')?.busy_W).toBe(364);
    expect(gpuPowerOf('NVIDIA H200 141GB HBM3e')?.tdp_W).toBe(700);
    expect(gpuPowerOf('NVIDIA GeForce RTX 3090')?.tdp_W).toBe(350);
    const hw = loadHardware('h100-pcie5');
    const e = energyOf({ hardware: { ...hw, gpu: { ...hw.gpu, name: 'Some GPU' } }, linkBytes: {}, peakBytes: {}, seconds: 1, gpuBusySeconds: 0.5, tokens: 1 });
    expect(e.joules_per_token).toBeNaN();
    expect(e.note).toMatch(/no GPU power constants for "Some GPU" \(known: H100, H200, A100, RTX 4090, RTX 3090;/);
  });

  it('every constant names its source', () => {
    const c = ENERGY_CONSTANTS as unknown as Record<string, unknown>;
    const check = (o: Record<string, unknown>) => {
      const sources = o.sources as Record<string, string>;
      for (const k of Object.keys(o)) if (k !== 'sources' && k !== 'match') expect(sources[k]?.length ?? 0, k).toBeGreaterThan(15);
    };
    for (const g of (c.gpus as Record<string, unknown>[])) check(g);
    for (const group of ['memory', 'storage']) for (const v of Object.values(c[group] as Record<string, Record<string, unknown>>)) check(v);
    check(c.links as Record<string, unknown>);
    expect((ENERGY_CONSTANTS.gpus[0] as unknown as { sources: Record<string, string> }).sources.busy_W).toMatch(/^measured/);
  });
});
