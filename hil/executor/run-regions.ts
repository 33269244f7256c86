/**
 * The backend memory a run owns: the lowered plan's regions (HBM arena, fresh KV, scratch, pinned
 * DRAM pool where any block passes through host memory, CXL stand-in), the block tables, and the
 * NVMe file tier. Every region is at least 4 KiB; all are freed together.
 */
import type { HilAddon, MemKind, NativeBackend, NativeFileTier } from '../addon-types.js';
import { blockBytes } from '../kv-format.js';
import { loadHil } from '../load-addon.js';
import type { LoweredPlan, RegionName } from './lowered-plan.js';

export interface FileTierOptions {
  /** directory for the NVMe tier's file */
  nvmeDir: string;
  directIo: boolean;
  /** I/O threads of the file tier (preads in flight at once) */
  ioThreads: number;
}

export class RunRegions {
  readonly regions = new Map<RegionName, number>();
  private readonly owned: number[] = [];
  tables = -1;
  file: NativeFileTier | undefined;

  constructor(private readonly b: NativeBackend) {}

  alloc(kind: MemKind, bytes: number): number {
    const r = this.b.alloc(kind, Math.max(4096, bytes));
    this.owned.push(r);
    return r;
  }

  /** the plan's regions, block tables and file tier */
  allocPlan(p: LoweredPlan, o: FileTierOptions): void {
    const fp16 = blockBytes(p.geometry, 'fp16');
    const usesHost = p.initial.some((x) => x.region === 'dram') || p.steps.some((s) => s.ops.some((x) => (x.o === 'copy' && (x.src === 'dram' || x.dst === 'dram')) || x.o === 'fileRead'));
    this.regions.set('arena', this.alloc('device', p.arenaBytes));
    this.regions.set('fresh', this.alloc('device', p.fresh.length * fp16));
    this.regions.set('scratch', this.alloc('device', p.scratchBytes));
    if (usesHost) this.regions.set('dram', this.alloc('pinned', p.hostBytes));
    if (p.usesCxl) this.regions.set('cxl', this.alloc('pinned', p.hostBytes));
    this.tables = this.alloc('device', p.tables.length);
    if (p.tables.length) this.b.write(this.tables, 0, p.tables);
    if (p.usesNvme) {
      const { addon } = loadHil() as { ok: true; addon: HilAddon };
      this.file = new addon.FileTier(this.b, { path: `${o.nvmeDir}/kvtier-hil-nvme-${process.pid}-${Date.now()}.bin`, bytes: p.hostBytes, direct: o.directIo, threads: o.ioThreads, removeOnClose: true });
    }
  }

  r(name: RegionName): number {
    const id = this.regions.get(name);
    if (id === undefined) throw new Error(`hil: region ${name} not allocated`);
    return id;
  }

  /** frees every region (the caller has synchronized the backend and closed the file tier) */
  free(): void {
    for (const id of this.owned) this.b.free(id);
  }
}
