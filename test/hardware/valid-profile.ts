import type { HardwareProfile } from '../../sim/hardware/profile.js';

/** A small valid profile (the five-tier tree of the presets) for validation tests to break. */
export function validProfile(): HardwareProfile {
  const tier = (name: string, kind: HardwareProfile['tiers'][number]['kind']) => ({
    name,
    kind,
    capacity_GiB: 10,
    read_GBps: 5,
    write_GBps: 4,
    read_latency_us: 0,
    write_latency_us: 1,
  });
  const link = (name: string, a: string, b: string) => ({
    name,
    a,
    b,
    a_to_b: { alpha_us: 2, GBps: 50 },
    b_to_a: { alpha_us: 0, GBps: 40 },
    copy_engines: 1,
  });
  return {
    schema: 'kvtier-hardware/v1',
    name: 'test',
    description: 'five tiers',
    gpu: { name: 'g', hbm_bandwidth_GBps: 3000, fp16_TFLOPs: 800, kernel_launch_us: 0, reserved_GiB: 0 },
    tiers: [tier('hbm', 'hbm'), tier('dram', 'dram'), tier('cxl', 'cxl'), tier('nvme', 'nvme'), tier('hdd', 'hdd')],
    links: [link('pcie', 'hbm', 'dram'), link('cxl', 'dram', 'cxl'), link('nvme', 'dram', 'nvme'), link('sata', 'dram', 'hdd')],
    sources: { 'gpu.fp16_TFLOPs': 'a test' },
  };
}
