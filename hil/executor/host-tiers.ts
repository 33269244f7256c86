/**
 * The host tiers as the executor maps them: DRAM and NVMe blocks live in the pinned DRAM region (NVMe
 * ones at the same offset of the file, the DRAM slot being their bounce buffer), CXL blocks in a
 * second pinned region; block (l, b) sits at slot l * M + b. Also the link keys each leg is counted on.
 */
import type { HardwareProfile } from '../../sim/hardware/profile.js';
import { routeKeys } from './link-keys.js';
import type { RegionName } from './lowered-plan.js';

export class HostTiers {
  readonly kinds: string[];
  readonly names: string[];
  /** whether any block lives in CXL / NVMe (set as regions are asked for) */
  usesCxl = false;
  usesNvme = false;

  constructor(
    private readonly hw: HardwareProfile,
    private readonly M: number,
    private readonly slotBytes: number,
  ) {
    this.kinds = hw.tiers.map((t) => t.kind);
    this.names = hw.tiers.map((t) => t.name);
  }

  isNvme(t: number): boolean {
    return this.kinds[t] === 'nvme';
  }

  region(t: number): RegionName {
    const k = this.kinds[t];
    if (k === 'dram' || k === 'nvme') {
      if (k === 'nvme') this.usesNvme = true;
      return 'dram';
    }
    if (k === 'cxl') {
      this.usesCxl = true;
      return 'cxl';
    }
    throw new Error(`hil: tier "${this.names[t]}" (${k}) has no hardware in the HIL executor (supported: hbm, dram, cxl mapped to pinned DRAM, nvme)`);
  }

  offset(l: number, b: number): number {
    return (l * this.M + b) * this.slotBytes;
  }

  /** the DRAM tier's name where t is NVMe (its copy leg starts there), else t's */
  copyEnd(t: number): string {
    return this.isNvme(t) ? this.names[this.kinds.indexOf('dram')] : this.names[t];
  }

  /** link keys of the NVMe tier's file leg */
  nvmeKeys(dir: 'read' | 'write'): string[] {
    const nv = this.kinds.indexOf('nvme');
    const host = this.hw.links.find((l) => (l.a === this.names[nv] || l.b === this.names[nv]))!;
    const other = host.a === this.names[nv] ? host.b : host.a;
    return dir === 'read' ? routeKeys(this.hw, this.names[nv], other) : routeKeys(this.hw, other, this.names[nv]);
  }

  /** Host-side key path: for NVMe the copy leg is dram<->hbm, the file leg is counted apart. */
  pcieKeys(hostTier: number, toHbm: boolean): string[] {
    const name = this.kinds[hostTier] === 'nvme' ? this.names[this.kinds.indexOf('dram')] ?? this.names[hostTier] : this.names[hostTier];
    return toHbm ? routeKeys(this.hw, name, this.names[0]) : routeKeys(this.hw, this.names[0], name);
  }

  /** keys between two host tiers' copy ends */
  hostKeys(from: number, to: number): string[] {
    return routeKeys(this.hw, this.copyEnd(from), this.copyEnd(to));
  }
}
