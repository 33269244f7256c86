import { describe, expect, it } from 'vitest';
import { loadHardware } from '../../sim/hardware/load-profile.js';
import { GiB } from '../../sim/hardware/profile.js';

describe('dpnc-4tier machine preset', () => {
  const hw = loadHardware('dpnc-4tier');
  const tier = (name: string) => hw.tiers.find((t) => t.name === name)!;

  it('holds the DPNC design tiers: DRAM 80 ns / 64 GB, CXL 350 ns / 512 GB, SSD 80 us / 4 TB, HDD 10 ms / 1 PB', () => {
    expect(hw.tiers.map((t) => t.name)).toEqual(['hbm', 'dram', 'cxl', 'nvme', 'hdd']);
    expect(hw.gpu.name).toBe('NVIDIA H100 80GB HBM3');
    // memory in binary sizes, storage in decimal ones
    expect(tier('dram').capacity_GiB).toBe(64);
    expect(tier('cxl').capacity_GiB).toBe(512);
    expect(tier('nvme').capacity_GiB * GiB).toBeCloseTo(4e12, -7);
    expect(tier('hdd').capacity_GiB * GiB).toBeCloseTo(1e15, -10);
    expect([tier('dram'), tier('cxl'), tier('nvme'), tier('hdd')].map((t) => [t.read_latency_us, t.write_latency_us])).toEqual([
      [0.08, 0.08],
      [0.35, 0.35],
      [80, 80],
      [10000, 10000],
    ]);
  });

  it('takes its bandwidths from the DDR5, CXL Type-3, NVMe Gen4 and HDD presets', () => {
    const same = (machine: string, name: string) => loadHardware(machine).tiers.find((t) => t.name === name)!;
    for (const [name, from] of [['dram', 'h100-pcie5'], ['cxl', 'h100-pcie5'], ['nvme', 'h100-pcie5-nvme4'], ['hdd', 'h100-pcie5']] as const) {
      expect([tier(name).read_GBps, tier(name).write_GBps]).toEqual([same(from, name).read_GBps, same(from, name).write_GBps]);
    }
    expect(hw.links.map((l) => `${l.name}:${l.a}-${l.b}`)).toEqual(['pcie:hbm-dram', 'cxl:dram-cxl', 'nvme:dram-nvme', 'sata:dram-hdd']);
  });

  it('names a source for every tier number, the seed figures as the DPNC design\'s', () => {
    for (let i = 1; i < hw.tiers.length; i++) {
      for (const f of ['capacity_GiB', 'read_GBps', 'write_GBps', 'read_latency_us', 'write_latency_us']) expect(hw.sources[`tiers[${i}].${f}`], `tiers[${i}].${f}`).toBeTruthy();
      expect(hw.sources[`tiers[${i}].capacity_GiB`]).toMatch(/^DPNC design/);
      expect(hw.sources[`tiers[${i}].read_latency_us`]).toMatch(/^DPNC design/);
      expect(hw.sources[`tiers[${i}].read_GBps`]).toMatch(/not a DPNC figure/);
    }
  });
});
