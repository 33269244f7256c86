/**
 * The host tiers as the executor maps them: DRAM and NVMe blocks live in the pinned DRAM region (NVMe
 * ones at the same offset of the file, the DRAM slot being their bounce buffer), CXL blocks in a
 * second pinned region; block (l, b) sits at slot l * M + b. HDD has no hardware here: its blocks live
 * in the NVMe tier's file like NVMe ones (a block is in one tier at a time, so its file offset is
 * free for it); its legs are counted on the HDD's links. Also the link keys each leg is counted on.
 */
import type { HardwareProfile } from '../../sim/hardware/profile.js';
import { routeKeys } from './link-keys.js';
import type { RegionName } from './lowered-plan.js';

export class HostTiers {
  readonly kinds: string[];
  readonly names: string[];
  /** whether any block lives in CXL / NVMe or HDD (the file) / HDD (set as regions are asked for) */
  usesCxl = false;
  usesNvme = false;
  usesHdd = false;

  constructor(
    private readonly hw: HardwareProfile,
    private readonly M: number,
    private readonly slotBytes: number,
  ) {
    this.kinds = hw.tiers.map((t) => t.kind);
    this.names = hw.tiers.map((t) => t.name);
  }

  /** whether tier t's blocks live in the file (NVMe, and HDD on the NVMe tier's file) */
  isFile(t: number): boolean {
    return this.kinds[t] === 'nvme' || this.kinds[t] === 'hdd';
  }

  region(t: number): RegionName {
    const k = this.kinds[t];
    if (k === 'dram' || k === 'nvme' || k === 'hdd') {
      if (k === 'nvme' || k === 'hdd') this.usesNvme = true;
      if (k === 'hdd') this.usesHdd = true;
      return 'dram';
    }
    if (k === 'cxl') {
      this.usesCxl = true;
      return 'cxl';
    }
    throw new Error(`hil: tier "${this.names[t]}" (${k}) has no hardware in the HIL executor (supported: hbm, dram, cxl mapped to pinned DRAM, nvme, hdd mapped to the NVMe file)`);
  }

  offset(l: number, b: number): number {
    return (l * this.M + b) * this.slotBytes;
  }

  /** the DRAM tier's name where t is a file tier (its copy leg starts there), else t's */
  copyEnd(t: number): string {
    return this.isFile(t) ? this.names[this.kinds.indexOf('dram')] : this.names[t];
  }

  /** link keys of file tier t's file leg (NVMe or HDD: each on its own links) */
  fileKeys(t: number, dir: 'read' | 'write'): string[] {
    const name = this.names[t];
    const host = this.hw.links.find((l) => l.a === name || l.b === name)!;
    const other = host.a === name ? host.b : host.a;
    return dir === 'read' ? routeKeys(this.hw, name, other) : routeKeys(this.hw, other, name);
  }

  /** Host-side key path: for NVMe the copy leg is dram<->hbm, the file leg is counted apart. */
  pcieKeys(hostTier: number, toHbm: boolean): string[] {
    const name = this.isFile(hostTier) ? this.names[this.kinds.indexOf('dram')] ?? this.names[hostTier] : this.names[hostTier];
    return toHbm ? routeKeys(this.hw, name, this.names[0]) : routeKeys(this.hw, this.names[0], name);
  }

  /** keys between two host tiers' copy ends */
  hostKeys(from: number, to: number): string[] {
    return routeKeys(this.hw, this.copyEnd(from), this.copyEnd(to));
  }
}
