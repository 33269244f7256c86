import { describe, expect, it } from 'vitest';
import { withMeasuredLink } from '../../hil/validate/resimulate.js';
import type { HardwareProfile, LinkSpec } from '../../sim/hardware/profile.js';

const tier = (name: string, kind: HardwareProfile['tiers'][number]['kind']) => ({ name, kind, capacity_GiB: 80, read_GBps: 1000, write_GBps: 1000, read_latency_us: 0, write_latency_us: 0 });
const link = (name: string, a: string, b: string, under?: number): LinkSpec => ({
  name,
  a,
  b,
  a_to_b: { alpha_us: 2, GBps: 50, ...(under ? { GBps_under_compute: under } : {}) },
  b_to_a: { alpha_us: 3, GBps: 40, ...(under ? { GBps_under_compute: under / 2 } : {}) },
  copy_engines: 1,
});
const profile = (links: LinkSpec[]): HardwareProfile => ({
  schema: 'kvtier-hardware/v1',
  name: 't',
  description: '',
  gpu: { name: 'g', hbm_bandwidth_GBps: 3000, fp16_TFLOPs: 900, kernel_launch_us: 3, reserved_GiB: 1 },
  tiers: [tier('hbm', 'hbm'), tier('dram', 'dram'), tier('cxl', 'cxl')],
  links,
  sources: {},
});

describe('withMeasuredLink', () => {
  it('sets the HBM <-> DRAM link to the runs\' mean measured bandwidths, scaling the under-compute rates', () => {
    // a = hbm: a_to_b is D2H, b_to_a is H2D
    const p = profile([link('pcie', 'hbm', 'dram', 48), link('cxl', 'dram', 'cxl')]);
    const before = JSON.stringify(p);
    const q = withMeasuredLink(p, [[30, 45], [40, 35]], 'p.json');
    // H2D (30 + 40) / 2 = 35, D2H (45 + 35) / 2 = 40
    expect(q.links[0].b_to_a).toEqual({ alpha_us: 3, GBps: 35, GBps_under_compute: (24 * 35) / 40 });
    expect(q.links[0].a_to_b).toEqual({ alpha_us: 2, GBps: 40, GBps_under_compute: (48 * 40) / 50 });
    expect(q.links[1]).toEqual(p.links[1]);
    expect(JSON.stringify(p)).toBe(before);
  });

  it('finds the link written the other way round, and keeps directions without an under-compute rate so', () => {
    // a = dram: a_to_b is H2D
    const q = withMeasuredLink(profile([link('pcie', 'dram', 'hbm')]), [[20, 10]], 'p.json');
    expect(q.links[0].a_to_b).toEqual({ alpha_us: 2, GBps: 20 });
    expect(q.links[0].b_to_a).toEqual({ alpha_us: 3, GBps: 10 });
  });

  it('refuses a profile without an HBM <-> DRAM link and readings that are not above 0', () => {
    expect(() => withMeasuredLink(profile([link('cxl', 'dram', 'cxl')]), [[20, 10]], 'p.json')).toThrow(/p\.json: no link between hbm and a DRAM tier/);
    expect(() => withMeasuredLink(profile([link('pcie', 'hbm', 'dram')]), [[0, 10]], 'p.json')).toThrow(/p\.json: the measured link bandwidths must be above 0 \(H2D 0, D2H 10 GB\/s\)/);
  });
});
