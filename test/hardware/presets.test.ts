import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { checkSources } from '../../sim/hardware/check-sources.js';
import { gpuPreset, listHardware, resolveMachine, tierPreset } from '../../sim/hardware/load-profile.js';
import { GPU_PRESET_FILES, TIER_PRESET_FILES } from '../../sim/hardware/preset-registry.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';

const machines = listHardware().map((m) => m.name);

describe('machine presets', () => {
  it('include the machines the project documents, each with a description', () => {
    for (const name of [
      'h100-pcie5', 'h100-pcie5-nvme4', 'a100-pcie4', 'a100-pcie4-nvme5', 'rtx4090-pcie4',
      'rtx3090-pcie4', 'h200-pcie5', 'h200-pcie5-nvme4',
    ]) {
      expect(machines).toContain(name);
    }
    for (const m of listHardware()) expect(m.description.length).toBeGreaterThan(10);
  });

  it.each(machines)('%s validates and has a source for every number and no stray source', (name) => {
    const p = resolveMachine(name);
    expect(validateProfile(p, name)).toBe(p);
    expect(checkSources(p)).toEqual({ missing: [], unknown: [] });
  });

  it.each(machines)('%s follows the topology convention the simulator routes by', (name) => {
    const p = resolveMachine(name);
    expect(p.name).toBe(name);
    expect(p.tiers.map((t) => [t.name, t.kind])).toEqual([
      ['hbm', 'hbm'], ['dram', 'dram'], ['cxl', 'cxl'], ['nvme', 'nvme'], ['hdd', 'hdd'],
    ]);
    expect(p.links.map((l) => [l.name, l.a, l.b])).toEqual([
      ['pcie', 'hbm', 'dram'], ['cxl', 'dram', 'cxl'], ['nvme', 'dram', 'nvme'], ['sata', 'dram', 'hdd'],
    ]);
    // a GPU's memory is the fastest tier and each tier further down is slower to read
    const reads = p.tiers.map((t) => t.read_GBps);
    expect([...reads].sort((a, b) => b - a)).toEqual(reads);
    expect(p.gpu.reserved_GiB).toBeGreaterThanOrEqual(2);
    expect(p.gpu.reserved_GiB).toBeLessThanOrEqual(4);
  });

  it('nvme variants differ from their base only in the NVMe tier and link', () => {
    const pairs = [['h100-pcie5', 'h100-pcie5-nvme4'], ['h200-pcie5', 'h200-pcie5-nvme4'], ['a100-pcie4', 'a100-pcie4-nvme5']];
    for (const [base, variant] of pairs) {
      const a = resolveMachine(base!);
      const b = resolveMachine(variant!);
      expect(b.gpu).toEqual(a.gpu);
      expect(b.tiers.filter((t) => t.name !== 'nvme')).toEqual(a.tiers.filter((t) => t.name !== 'nvme'));
      expect(b.links.filter((l) => l.name !== 'nvme')).toEqual(a.links.filter((l) => l.name !== 'nvme'));
      expect(b.tiers[3]).not.toEqual(a.tiers[3]);
    }
    // Gen5 x4 moves twice the bytes of Gen4 x4 (same derating)
    const g5 = resolveMachine('h100-pcie5').links[2]!.b_to_a.GBps;
    const g4 = resolveMachine('h100-pcie5-nvme4').links[2]!.b_to_a.GBps;
    expect(g5 / g4).toBeCloseTo(2, 1);
  });

  it('PCIe Gen4 x16 machines get half the host-link bandwidth of the measured Gen5 link or less', () => {
    const gen5 = resolveMachine('h100-pcie5').links[0]!;
    for (const name of ['a100-pcie4', 'rtx4090-pcie4', 'rtx3090-pcie4']) {
      const gen4 = resolveMachine(name).links[0]!;
      expect(gen4.b_to_a.GBps).toBeLessThanOrEqual(gen5.b_to_a.GBps / 2);
      expect(gen4.a_to_b.GBps).toBeLessThanOrEqual(gen5.a_to_b.GBps / 2);
    }
  });

  it('h100-pcie5 takes its HBM numbers from the reference measurement', () => {
    const ref = JSON.parse(
      readFileSync(fileURLToPath(new URL('../../sim/hardware/reference/h100-pcie5-reference-2026-11-22.json', import.meta.url)), 'utf8'),
    ) as { info: { memGiB: number }; curves: { d2d: { bytes: number; GBps: number }[] } };
    const p = resolveMachine('h100-pcie5');
    expect(p.tiers[0]!.capacity_GiB).toBeCloseTo(ref.info.memGiB, 2);
    // device copy of >= 256 MiB, counting read + write traffic
    const big = ref.curves.d2d.filter((c) => c.bytes >= 256 * 2 ** 20).map((c) => 2 * c.GBps);
    expect(p.gpu.hbm_bandwidth_GBps).toBeGreaterThanOrEqual(Math.min(...big));
    expect(p.gpu.hbm_bandwidth_GBps).toBeLessThanOrEqual(Math.max(...big));
    expect(p.gpu.fp16_TFLOPs).toBe(790);
  });

  it('return a fresh object each time', () => {
    const a = resolveMachine('h100-pcie5');
    a.tiers[1]!.capacity_GiB = 1;
    a.sources['gpu.fp16_TFLOPs'] = 'changed';
    const b = resolveMachine('h100-pcie5');
    expect(b.tiers[1]!.capacity_GiB).toBe(256);
    expect(b.sources['gpu.fp16_TFLOPs']).not.toBe('changed');
  });
});

describe('preset parts', () => {
  it.each(Object.keys(GPU_PRESET_FILES))('GPU part %s validates and cites every number', (name) => {
    const part = gpuPreset(name);
    expect(part.name).toBe(name);
    expect(part.hbm.name).toBe('hbm');
    expect(part.host_link).toMatchObject({ name: 'pcie', a: 'hbm', b: 'dram' });
    expect(Object.keys(part.sources).sort()).toEqual(
      [
        ...Object.keys(part.gpu).filter((k) => k !== 'name').map((k) => `gpu.${k}`),
        ...Object.keys(part.hbm).filter((k) => !['name', 'kind'].includes(k)).map((k) => `hbm.${k}`),
        'host_link.a_to_b.alpha_us', 'host_link.a_to_b.GBps', 'host_link.b_to_a.alpha_us',
        'host_link.b_to_a.GBps', 'host_link.copy_engines',
      ].sort(),
    );
  });

  it.each(Object.keys(TIER_PRESET_FILES))('tier part %s validates and is used by some machine', (name) => {
    const part = tierPreset(name);
    expect(part.name).toBe(name);
    const users = machines.filter((m) => resolveMachine(m).tiers.some((t) => isDeepStrictEqual(t, part.tier)));
    expect(users.length).toBeGreaterThan(0);
  });
});
