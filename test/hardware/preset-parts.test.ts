import { describe, expect, it } from 'vitest';
import { composeMachine } from '../../sim/hardware/compose-machine.js';
import { validateGpuPreset, type GpuPreset } from '../../sim/hardware/gpu-preset.js';
import { validateMachineList } from '../../sim/hardware/machine-list.js';
import { validateTierPreset, type HostTierPreset } from '../../sim/hardware/tier-preset.js';
import { validateProfile } from '../../sim/hardware/validate-profile.js';
import { validProfile } from './valid-profile.js';

const base = validProfile();
const gpu: GpuPreset = {
  name: 'g',
  description: '',
  gpu: base.gpu,
  hbm: base.tiers[0]!,
  host_link: base.links[0]!,
  sources: { 'gpu.fp16_TFLOPs': 'S1', 'hbm.capacity_GiB': 'S2', 'host_link.b_to_a.GBps': 'S3' },
};
const dram: HostTierPreset = { name: 'd', description: '', tier: base.tiers[1]!, sources: { 'tier.read_GBps': 'S4' } };
const nvme: HostTierPreset = {
  name: 'n',
  description: '',
  tier: base.tiers[3]!,
  link: base.links[2]!,
  sources: { 'tier.capacity_GiB': 'S5', 'link.a_to_b.alpha_us': 'S6' },
};

function problemsOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (e) {
    return (e as { problems: readonly string[] }).problems;
  }
  return [];
}

describe('composeMachine', () => {
  it('puts GPU memory first, host tiers in order, and re-keys each part\'s sources to profile paths', () => {
    const p = composeMachine('m', { description: 'desc', gpu: 'g', tiers: ['d', 'n'] }, gpu, [dram, nvme]);
    expect(p.tiers.map((t) => t.name)).toEqual(['hbm', 'dram', 'nvme']);
    expect(p.links.map((l) => l.name)).toEqual(['pcie', 'nvme']);
    expect(p.sources).toEqual({
      'gpu.fp16_TFLOPs': 'S1',
      'tiers[0].capacity_GiB': 'S2',
      'links[0].b_to_a.GBps': 'S3',
      'tiers[1].read_GBps': 'S4',
      'tiers[2].capacity_GiB': 'S5',
      'links[1].a_to_b.alpha_us': 'S6', // dram has no link, so nvme's link is links[1]
    });
    expect(validateProfile(p, 'm')).toBe(p);
    p.tiers[0]!.capacity_GiB = 1;
    expect(gpu.hbm.capacity_GiB).toBe(10); // parts are copied, not shared
  });
});

describe('part validation', () => {
  it('accepts the parts above', () => {
    expect(validateGpuPreset(gpu, 'g.json')).toBe(gpu);
    expect(validateTierPreset(nvme, 'n.json')).toBe(nvme);
    expect(validateTierPreset(dram, 'd.json')).toBe(dram);
  });

  it('checks a GPU part\'s host link starts at its memory and sources name its own fields', () => {
    const bad = structuredClone(gpu);
    bad.host_link.a = 'dram';
    bad.sources['tiers[0].read_GBps'] = 'wrong key';
    expect(problemsOf(() => validateGpuPreset(bad, 'g.json'))).toEqual([
      'host_link.a must be the GPU memory tier "hbm" (got "dram")',
      'sources["tiers[0].read_GBps"] must name a field starting with gpu., hbm., host_link.',
    ]);
  });

  it('checks a tier part has its link (unless it is DRAM), ending at itself, and is not HBM', () => {
    const noLink = structuredClone(nvme);
    delete noLink.link;
    expect(problemsOf(() => validateTierPreset(noLink, 'n.json'))).toEqual([
      'link is missing: a nvme tier needs the link that attaches it to DRAM',
    ]);
    const wrongEnd = structuredClone(nvme);
    wrongEnd.link!.b = 'hdd';
    expect(problemsOf(() => validateTierPreset(wrongEnd, 'n.json'))).toEqual([
      'link.b must be this tier, "nvme" (got "hdd")',
    ]);
    const hbm = structuredClone(dram);
    hbm.tier.kind = 'hbm';
    expect(problemsOf(() => validateTierPreset(hbm, 'd.json'))).toEqual([
      'tier.kind must not be "hbm": GPU memory comes from a GPU preset',
    ]);
  });

  it('checks machines name existing parts, listing the choices', () => {
    const list = { m: { description: '', gpu: 'h100', tiers: ['ddr5', 'nvme'] } };
    expect(problemsOf(() => validateMachineList(list, 'machines.json', ['h100-80gb-hbm3'], ['ddr5', 'nvme-gen4']))).toEqual([
      '["m"].gpu must be one of h100-80gb-hbm3 (got "h100")',
      '["m"].tiers[1] must be one of ddr5, nvme-gen4 (got "nvme")',
    ]);
  });
});
