/**
 * Lowers a recorded plan (plan.ts) to real work: copies between regions, quantization kernels,
 * file reads and writes, attention over a block table, GEMVs, cross-stream fences and timing marks.
 *
 * Memory: the HBM arena is one device region, [staging ring | slabs]: resident blocks live in slab
 * slots (slab-allocator.ts), prefetched and fetched copies in ring extents (staging-ring.ts), so
 * one block table addresses both. Host tiers keep block (l, b) at a fixed slot (l * M + b) of
 * their pinned region; the NVMe tier keeps it at the same offset of its file and uses the DRAM slot
 * as its bounce buffer. CXL has no hardware here: its blocks live in a second pinned region.
 * Moves of a batch are coalesced where source and destination are both contiguous.
 */
import type { HardwareProfile } from '../../sim/hardware/profile.js';
import type { ModelSpec } from '../../sim/models/model.js';
import { type BlockGeometry, type Precision, blockBytes } from '../kv-format.js';
import { type Access, COMPUTE, type FenceOp, Fences, MEMORY, type StreamIx } from './fences.js';
import { allLinkKeys, routeKeys } from './link-keys.js';
import type { PlannedLayer, PlannedMove, PlannedStage, RecordedPlan } from './plan.js';
import { SlabAllocator } from './slab-allocator.js';
import { RingFullError, StagingRing } from './staging-ring.js';

export type RegionName = 'arena' | 'dram' | 'cxl' | 'fresh' | 'scratch';

export type LowOp =
  | FenceOp
  | { o: 'copy'; s: StreamIx; dst: RegionName; dstOff: number; src: RegionName; srcOff: number; bytes: number }
  | { o: 'quant'; src: RegionName; srcOff: number; dst: RegionName; dstOff: number; bits: 2 | 4 | 8 }
  | { o: 'dequant'; src: RegionName; srcOff: number; dst: RegionName; dstOff: number; bits: 2 | 4 | 8 }
  | { o: 'mark'; s: StreamIx; id: number }
  /** uniform: every table entry has these bits (the kernel may then run a path made for that precision), else 0 */
  | { o: 'attn'; layer: number; tableOff: number; tokens: number; uniform: number }
  | { o: 'gemv'; layer: number; lmHead: boolean }
  | { o: 'fileRead'; offset: number; bytes: number }
  | { o: 'fileWrite'; offset: number; bytes: number }
  | { o: 'fileJoin' };

export interface LayerMarks {
  layer: number;
  /** compute stream reaches the layer, done waiting, attention done, projections done */
  pre: number;
  ready: number;
  attn: number;
  done: number;
}

export interface LowStep {
  step: number;
  contextTokens: number;
  ops: LowOp[];
  layers: LayerMarks[];
  /** memory-stream busy intervals (mark ids) */
  memSpans: [number, number, string][];
  bytes: Record<string, number>;
}

export interface InitialBlock {
  layer: number;
  block: number;
  bits: number;
  region: RegionName;
  offset: number;
  /** also written to the file tier at this offset */
  file: boolean;
}

export interface LoweredPlan {
  geometry: BlockGeometry;
  slotBytes: number;
  ringBytes: number;
  arenaBytes: number;
  hostBytes: number;
  usesCxl: boolean;
  usesNvme: boolean;
  steps: LowStep[];
  tables: Uint8Array;
  initial: InitialBlock[];
  /** blocks written during decode, in fresh-region order (their 16-bit content) */
  fresh: { layer: number; block: number }[];
  marks: number;
  fences: [number, number];
  scratchBytes: number;
  /** where every block is after the last step (tier, bits, arena offset of resident ones) */
  final: { tier: Int8Array; bits: Int8Array; slot: Float64Array };
  layers: number;
  maxBlocks: number;
  /** host region per tier index (dram, cxl; nvme blocks are read through their dram slot) */
  hostRegionOf: (RegionName | undefined)[];
  nvmeTier: number;
}

export interface LowerOptions {
  slabBytes: number;
  groupSize: number;
  /** staging ring size; default 3 layers of full-context FP16 KV (doubled on overflow) */
  ringBytes?: number;
  /**
   * default true: record the compute stream's fence right after each attention that read staging
   * extents, so a later copy into that ring space waits for that attention only (measured on the
   * H100: 1.3 ms per step less memory-stream idle for lru-offload, lab/notes/HIL-NOTES.md). false: the
   * fence is recorded where the memory stream first needs it, i.e. after all compute work issued by
   * then (the next layer's attention and projections included).
   */
  eagerFences?: boolean;
}

const PREC: Record<number, Precision> = { 16: 'fp16', 8: 'int8', 4: 'int4', 2: 'int2' };
const PREC_CODE: Record<number, number> = { 16: 0, 8: 1, 4: 2, 2: 3 };
export const align = (n: number, a: number): number => Math.ceil(n / a) * a;

/** (src, dst, bytes) copies in order, merged where source and destination both continue the previous copy */
export function coalesceCopies(list: readonly (readonly [number, number, number])[]): [number, number, number][] {
  const out: [number, number, number][] = [];
  for (const [s, d, n] of list) {
    const cur = out[out.length - 1];
    if (cur && s === cur[0] + cur[2] && d === cur[1] + cur[2]) cur[2] += n;
    else out.push([s, d, n]);
  }
  return out;
}

export function geometryOf(model: ModelSpec, blockTokens: number, groupSize: number): BlockGeometry {
  if (model.attention === 'mla') throw new Error(`hil: model ${model.name} uses MLA; the HIL attention kernel supports MHA/GQA only`);
  if (model.head_dim % groupSize !== 0) throw new Error(`hil: --group-size ${groupSize} must divide head_dim ${model.head_dim}`);
  return { kvHeads: model.kv_heads, blockTokens, headDim: model.head_dim, groupSize };
}

export function lowerPlan(plan: RecordedPlan, model: ModelSpec, hw: HardwareProfile, blockTokens: number, o: LowerOptions): LoweredPlan {
  const g = geometryOf(model, blockTokens, o.groupSize);
  const fp16Bytes = blockBytes(g, 'fp16');
  let ring = o.ringBytes ?? align(3 * plan.initial.maxBlocks * fp16Bytes, 1 << 21);
  for (;;) {
    try {
      return new Lowering(plan, hw, g, o.slabBytes, ring, o.eagerFences ?? true).run();
    } catch (e) {
      if (!(e instanceof RingFullError)) throw e;
      ring *= 2;
    }
  }
}

class Lowering {
  private readonly M: number;
  private readonly slotBytes: number;
  private readonly slabs: SlabAllocator;
  private readonly ringAlloc: StagingRing;
  private readonly fences: Fences;
  private ops: LowOp[] = [];
  private readonly tier: Int8Array;
  private readonly bits: Int8Array;
  /** arena offset of resident blocks */
  private readonly slot: Float64Array;
  private readonly staged: Map<number, { offset: number; tier: number; bits: number }>[];
  private readonly stagedExtents: number[][];
  private tables: Uint8Array = new Uint8Array(1 << 16);
  private tableEnd = 0;
  private markCount = 0;
  private readonly fresh: { layer: number; block: number }[] = [];
  private readonly freshIndex = new Map<number, number>();
  private readonly kinds: string[];
  private readonly names: string[];
  private bytes: Record<string, number> = {};
  private memSpans: [number, number, string][] = [];
  private usesCxl = false;
  private usesNvme = false;

  constructor(
    private readonly plan: RecordedPlan,
    private readonly hw: HardwareProfile,
    private readonly g: BlockGeometry,
    slabBytes: number,
    private readonly ringBytes: number,
    private readonly eagerFences = true,
  ) {
    this.M = plan.initial.maxBlocks;
    this.slotBytes = align(blockBytes(g, 'fp16'), 4096);
    this.slabs = new SlabAllocator(ringBytes, Math.max(slabBytes, align(blockBytes(g, 'fp16'), 16)));
    this.ringAlloc = new StagingRing(ringBytes);
    this.fences = new Fences((op) => this.ops.push(op));
    this.tier = plan.initial.tier.slice();
    this.bits = plan.initial.bits.slice();
    this.slot = new Float64Array(this.tier.length).fill(-1);
    this.staged = Array.from({ length: plan.initial.layers }, () => new Map());
    this.stagedExtents = Array.from({ length: plan.initial.layers }, () => []);
    this.kinds = hw.tiers.map((t) => t.kind);
    this.names = hw.tiers.map((t) => t.name);
  }

  run(): LoweredPlan {
    const initial = this.placeInitial();
    const steps: LowStep[] = [];
    for (const s of this.plan.steps) {
      this.ops = [];
      this.bytes = Object.fromEntries(allLinkKeys(this.hw).map((k) => [k, 0]));
      this.memSpans = [];
      const layers: LayerMarks[] = [];
      for (const op of s.ops) {
        if (op.kind === 'move') this.move(op);
        else if (op.kind === 'stage') this.stage(op);
        else layers.push(this.layer(op));
      }
      steps.push({ step: s.step, contextTokens: s.contextTokens, ops: this.ops, layers, memSpans: this.memSpans, bytes: this.bytes });
    }
    const fp16 = blockBytes(this.g, 'fp16');
    return {
      geometry: this.g,
      slotBytes: this.slotBytes,
      ringBytes: this.ringBytes,
      arenaBytes: this.ringBytes + this.slabs.extent,
      hostBytes: this.plan.initial.layers * this.M * this.slotBytes,
      usesCxl: this.usesCxl,
      usesNvme: this.usesNvme,
      steps,
      tables: this.tables.subarray(0, this.tableEnd),
      initial,
      fresh: this.fresh,
      marks: this.markCount,
      fences: this.fences.counts,
      scratchBytes: 2 * align(fp16, 4096),
      final: { tier: this.tier, bits: this.bits, slot: this.slot },
      layers: this.plan.initial.layers,
      maxBlocks: this.M,
      hostRegionOf: this.kinds.map((k) => (k === 'cxl' ? 'cxl' : k === 'dram' || k === 'nvme' ? 'dram' : undefined)),
      nvmeTier: this.kinds.indexOf('nvme'),
    };
  }

  // ---- placement helpers ----

  private ix(l: number, b: number): number {
    return l * this.M + b;
  }

  private hostRegion(t: number): RegionName {
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

  private hostOffset(l: number, b: number): number {
    return this.ix(l, b) * this.slotBytes;
  }

  private bb(bits: number): number {
    return blockBytes(this.g, PREC[bits]!);
  }

  private count(keys: string[], n: number): void {
    for (const k of keys) this.bytes[k] = (this.bytes[k] ?? 0) + n;
  }

  private mark(s: StreamIx): number {
    const id = this.markCount++;
    this.ops.push({ o: 'mark', s, id });
    return id;
  }

  private placeInitial(): InitialBlock[] {
    const out: InitialBlock[] = [];
    const { layers } = this.plan.initial;
    for (let l = 0; l < layers; l++) {
      for (let b = 0; b < this.M; b++) {
        const t = this.tier[this.ix(l, b)];
        if (t < 0) continue;
        const bits = this.bits[this.ix(l, b)];
        if (t === 0) {
          const s = this.slabs.alloc(this.bb(bits));
          this.slot[this.ix(l, b)] = s.offset;
          out.push({ layer: l, block: b, bits, region: 'arena', offset: s.offset, file: false });
        } else {
          const region = this.hostRegion(t);
          out.push({ layer: l, block: b, bits, region, offset: this.hostOffset(l, b), file: this.kinds[t] === 'nvme' });
        }
      }
    }
    return out;
  }

  private freshOffset(l: number, b: number): number {
    const key = this.ix(l, b);
    let i = this.freshIndex.get(key);
    if (i === undefined) {
      i = this.fresh.length;
      this.fresh.push({ layer: l, block: b });
      this.freshIndex.set(key, i);
    }
    return i * blockBytes(this.g, 'fp16');
  }

  // ---- copies ----

  /** Coalesced copies on the memory stream (one busy span): pairs of (src, dst, bytes). */
  private copies(label: string, src: RegionName, dst: RegionName, list: [number, number, number][], links: string[]): void {
    if (list.length === 0) return;
    const m0 = this.mark(MEMORY);
    for (const [srcOff, dstOff, bytes] of coalesceCopies(list)) this.ops.push({ o: 'copy', s: MEMORY, src, srcOff, dst, dstOff, bytes });
    this.memSpans.push([m0, this.mark(MEMORY), label]);
    this.count(links, list.reduce((a, x) => a + x[2], 0));
  }

  private fileRuns(kind: 'fileRead' | 'fileWrite', list: [number, number][]): void {
    if (list.length === 0) return;
    const sorted = [...list].sort((a, b) => a[0] - b[0]);
    let [off, n] = sorted[0];
    for (let i = 1; i < sorted.length; i++) {
      const [o2, n2] = sorted[i];
      if (o2 === off + align(n, 4096)) n = o2 - off + n2;
      else {
        this.ops.push({ o: kind, offset: off, bytes: align(n, 4096) });
        [off, n] = [o2, n2];
      }
    }
    this.ops.push({ o: kind, offset: off, bytes: align(n, 4096) });
    if (kind === 'fileRead') this.ops.push({ o: 'fileJoin' });
  }

  private nvmeKey(dir: 'read' | 'write'): string[] {
    const nv = this.kinds.indexOf('nvme');
    const host = this.hw.links.find((l) => (l.a === this.names[nv] || l.b === this.names[nv]))!;
    const other = host.a === this.names[nv] ? host.b : host.a;
    return dir === 'read' ? routeKeys(this.hw, this.names[nv], other) : routeKeys(this.hw, other, this.names[nv]);
  }

  /** Host-side key path: for NVMe the copy leg is dram<->hbm, the file leg is counted apart. */
  private pcieKeys(hostTier: number, toHbm: boolean): string[] {
    const name = this.kinds[hostTier] === 'nvme' ? this.names[this.kinds.indexOf('dram')] ?? this.names[hostTier] : this.names[hostTier];
    return toHbm ? routeKeys(this.hw, name, this.names[0]) : routeKeys(this.hw, this.names[0], name);
  }

  private touch(s: StreamIx, acc: Access): void {
    this.fences.before(s, acc);
  }

  // ---- moves ----

  private move(m: PlannedMove): void {
    const { layer: l } = m;
    const from = m.fromTier;
    const to = m.toTier;
    if (from === 0 && to === 0) return this.requantInHbm(m);
    if (to === 0) return this.promote(m);
    if (from === 0) return this.demote(m);
    // between host tiers
    if (m.fromBits !== m.toBits) throw new Error(`hil: requantizing between host tiers (${this.names[from]} -> ${this.names[to]}) is not supported`);
    const fromRegion = this.hostRegion(from);
    const toRegion = this.hostRegion(to);
    const nFrom = this.kinds[from] === 'nvme';
    const nTo = this.kinds[to] === 'nvme';
    const sizes = m.blocks.map(() => this.bb(m.fromBits));
    if (nFrom) this.fileRuns('fileRead', m.blocks.map((b, i) => [this.hostOffset(l, b), sizes[i]]));
    if (nFrom) this.count(this.nvmeKey('read'), sizes.reduce((a, b) => a + b, 0));
    if (fromRegion !== toRegion) {
      const keys = routeKeys(this.hw, nFrom ? this.names[this.kinds.indexOf('dram')] : this.names[from], nTo ? this.names[this.kinds.indexOf('dram')] : this.names[to]);
      this.copies(`${m.reason} ${this.names[from]}->${this.names[to]}`, fromRegion, toRegion, m.blocks.map((b, i) => [this.hostOffset(l, b), this.hostOffset(l, b), sizes[i]]), keys);
    }
    if (nTo) {
      this.fileRuns('fileWrite', m.blocks.map((b, i) => [this.hostOffset(l, b), sizes[i]]));
      this.count(this.nvmeKey('write'), sizes.reduce((a, b) => a + b, 0));
    }
    for (const b of m.blocks) this.setPlace(l, b, to, m.toBits);
  }

  private setPlace(l: number, b: number, t: number, bits: number): void {
    this.tier[this.ix(l, b)] = t;
    this.bits[this.ix(l, b)] = bits;
  }

  private requantInHbm(m: PlannedMove): void {
    const l = m.layer;
    const m0 = this.mark(MEMORY);
    for (const b of m.blocks) {
      const old = this.slot[this.ix(l, b)];
      const nu = this.slabs.alloc(this.bb(m.toBits));
      this.touch(MEMORY, this.slabs.access(old));
      this.touch(MEMORY, nu.acc);
      this.convert('arena', old, m.fromBits, 'arena', nu.offset, m.toBits);
      this.fences.after(MEMORY, this.slabs.access(old));
      this.fences.after(MEMORY, nu.acc);
      this.slabs.free(old);
      this.slot[this.ix(l, b)] = nu.offset;
      this.setPlace(l, b, 0, m.toBits);
    }
    this.memSpans.push([m0, this.mark(MEMORY), `requantize ${m.fromBits}->${m.toBits}b`]);
  }

  /** (de)quantization kernels on the memory stream; scratch holds an intermediate FP16 block */
  private convert(src: RegionName, srcOff: number, fromBits: number, dst: RegionName, dstOff: number, toBits: number): void {
    if (fromBits === toBits) {
      this.ops.push({ o: 'copy', s: MEMORY, src, srcOff, dst, dstOff, bytes: this.bb(fromBits) });
    } else if (fromBits === 16) {
      this.ops.push({ o: 'quant', src, srcOff, dst, dstOff, bits: toBits as 2 | 4 | 8 });
    } else if (toBits === 16) {
      this.ops.push({ o: 'dequant', src, srcOff, dst, dstOff, bits: fromBits as 2 | 4 | 8 });
    } else {
      const mid = align(blockBytes(this.g, 'fp16'), 4096);
      this.ops.push({ o: 'dequant', src, srcOff, dst: 'scratch', dstOff: mid, bits: fromBits as 2 | 4 | 8 });
      this.ops.push({ o: 'quant', src: 'scratch', srcOff: mid, dst, dstOff, bits: toBits as 2 | 4 | 8 });
    }
  }

  private promote(m: PlannedMove): void {
    const l = m.layer;
    const from = m.fromTier;
    const region = this.hostRegion(from);
    const nvme = this.kinds[from] === 'nvme';
    const size = this.bb(m.fromBits);
    if (nvme) {
      this.fileRuns('fileRead', m.blocks.map((b) => [this.hostOffset(l, b), size]));
      this.count(this.nvmeKey('read'), size * m.blocks.length);
    }
    const keys = this.pcieKeys(from, true);
    if (m.fromBits === m.toBits) {
      const list: [number, number, number][] = [];
      for (const b of m.blocks) {
        const s = this.slabs.alloc(this.bb(m.toBits));
        this.touch(MEMORY, s.acc);
        this.fences.after(MEMORY, s.acc);
        this.slot[this.ix(l, b)] = s.offset;
        list.push([this.hostOffset(l, b), s.offset, size]);
      }
      this.copies(`${m.reason} ${this.names[from]}->${this.names[0]}`, region, 'arena', list, keys);
    } else {
      const m0 = this.mark(MEMORY);
      for (const b of m.blocks) {
        const s = this.slabs.alloc(this.bb(m.toBits));
        this.touch(MEMORY, s.acc);
        this.ops.push({ o: 'copy', s: MEMORY, src: region, srcOff: this.hostOffset(l, b), dst: 'scratch', dstOff: 0, bytes: size });
        this.convert('scratch', 0, m.fromBits, 'arena', s.offset, m.toBits);
        this.fences.after(MEMORY, s.acc);
        this.slot[this.ix(l, b)] = s.offset;
      }
      this.memSpans.push([m0, this.mark(MEMORY), `${m.reason} + dequantize`]);
      this.count(keys, size * m.blocks.length);
    }
    for (const b of m.blocks) this.setPlace(l, b, 0, m.toBits);
  }

  private demote(m: PlannedMove): void {
    const l = m.layer;
    const to = m.toTier;
    const region = this.hostRegion(to);
    const nvme = this.kinds[to] === 'nvme';
    const size = this.bb(m.toBits);
    const keys = this.pcieKeys(to, false);
    const spill = m.reason === 'spill';
    if (m.fromBits === m.toBits || spill) {
      const list: [number, number, number][] = [];
      for (const b of m.blocks) {
        if (spill) {
          list.push([this.freshOffset(l, b), this.hostOffset(l, b), blockBytes(this.g, 'fp16')]);
          continue;
        }
        const off = this.slot[this.ix(l, b)];
        this.touch(MEMORY, this.slabs.access(off));
        this.fences.after(MEMORY, this.slabs.access(off));
        list.push([off, this.hostOffset(l, b), size]);
      }
      this.copies(`${m.reason} ${this.names[0]}->${this.names[to]}`, spill ? 'fresh' : 'arena', region, list, keys);
    } else {
      const m0 = this.mark(MEMORY);
      for (const b of m.blocks) {
        const off = this.slot[this.ix(l, b)];
        this.touch(MEMORY, this.slabs.access(off));
        this.convert('arena', off, m.fromBits, 'scratch', 0, m.toBits);
        this.ops.push({ o: 'copy', s: MEMORY, src: 'scratch', srcOff: 0, dst: region, dstOff: this.hostOffset(l, b), bytes: size });
        this.fences.after(MEMORY, this.slabs.access(off));
      }
      this.memSpans.push([m0, this.mark(MEMORY), `quantize + ${m.reason}`]);
      this.count(keys, size * m.blocks.length);
    }
    if (nvme) {
      this.fileRuns('fileWrite', m.blocks.map((b) => [this.hostOffset(l, b), spill ? blockBytes(this.g, 'fp16') : size]));
      this.count(this.nvmeKey('write'), size * m.blocks.length);
    }
    for (const b of m.blocks) {
      if (!spill) {
        this.slabs.free(this.slot[this.ix(l, b)]);
        this.slot[this.ix(l, b)] = -1;
      }
      this.setPlace(l, b, to, m.toBits);
    }
  }

  /** copy offloaded blocks (their current bits) from one host tier into one ring extent */
  private toStaging(l: number, from: number, blocks: number[], bits: number[], reason: string): { offset: number; offsets: number[] } {
    const sizes = bits.map((x) => this.bb(x));
    const total = sizes.reduce((a, b) => a + b, 0);
    const ext = this.ringAlloc.alloc(align(total, 256));
    this.touch(MEMORY, ext.acc);
    this.fences.after(MEMORY, ext.acc);
    const region = this.hostRegion(from);
    if (this.kinds[from] === 'nvme') {
      this.fileRuns('fileRead', blocks.map((b, i) => [this.hostOffset(l, b), sizes[i]]));
      this.count(this.nvmeKey('read'), total);
    }
    const offsets: number[] = [];
    let at = ext.offset;
    const list: [number, number, number][] = blocks.map((b, i) => {
      offsets.push(at);
      const item: [number, number, number] = [this.hostOffset(l, b), at, sizes[i]];
      at += sizes[i];
      return item;
    });
    this.copies(`${reason} ${this.names[from]}->${this.names[0]}`, region, 'arena', list, this.pcieKeys(from, true));
    this.extAcc.set(ext.offset, ext.acc);
    return { offset: ext.offset, offsets };
  }

  private readonly extAcc = new Map<number, Access>();

  private stage(s: PlannedStage): void {
    const { offset, offsets } = this.toStaging(s.layer, s.fromTier, s.blocks, s.bits, 'prefetch');
    this.stagedExtents[s.layer].push(offset);
    s.blocks.forEach((b, i) => this.staged[s.layer].set(b, { offset: offsets[i], tier: s.fromTier, bits: s.bits[i] }));
  }

  // ---- a layer ----

  private layer(w: PlannedLayer): LayerMarks {
    const l = w.layer;
    for (const b of w.dropped) {
      const off = this.slot[this.ix(l, b)];
      if (off >= 0) this.slabs.free(off);
      this.slot[this.ix(l, b)] = -1;
      this.tier[this.ix(l, b)] = -2;
    }
    const created: [number, number][] = [];
    for (const b of w.created) {
      const s = this.slabs.alloc(blockBytes(this.g, 'fp16'));
      this.slot[this.ix(l, b)] = s.offset;
      this.setPlace(l, b, 0, 16);
      created.push([this.freshOffset(l, b), s.offset]);
    }
    // where the kernel reads each attended block
    const n = w.attended.length;
    const entries = new Float64Array(n);
    const prec = new Int32Array(n);
    const reads: Access[] = [];
    const fetch = new Map<number, { blocks: number[]; bits: number[]; at: number[] }>();
    for (let i = 0; i < n; i++) {
      const b = w.attended[i];
      const t = this.tier[this.ix(l, b)];
      const bits = this.bits[this.ix(l, b)];
      prec[i] = PREC_CODE[bits];
      if (t === 0) {
        entries[i] = this.slot[this.ix(l, b)];
        reads.push(this.slabs.access(entries[i]));
        continue;
      }
      const st = this.staged[l].get(b);
      if (st && st.tier === t && st.bits === bits) {
        entries[i] = st.offset;
        continue;
      }
      let f = fetch.get(t);
      if (!f) fetch.set(t, (f = { blocks: [], bits: [], at: [] }));
      f.blocks.push(b);
      f.bits.push(bits);
      f.at.push(i);
    }
    const fetchExtents: number[] = [];
    for (const [t, f] of fetch) {
      const { offset, offsets } = this.toStaging(l, t, f.blocks, f.bits, 'fetch');
      fetchExtents.push(offset);
      f.at.forEach((i, k) => (entries[i] = offsets[k]));
    }
    const extents = [...this.stagedExtents[l], ...fetchExtents];
    // compute stream: reach, wait for memory, append new KV, attention, projections
    const pre = this.mark(COMPUTE);
    for (const acc of reads) this.touch(COMPUTE, acc);
    for (const e of extents) this.touch(COMPUTE, this.extAcc.get(e)!);
    for (const [, off] of created) this.touch(COMPUTE, this.slabs.access(off));
    const ready = this.mark(COMPUTE);
    for (const [src, dst] of created) {
      this.ops.push({ o: 'copy', s: COMPUTE, src: 'fresh', srcOff: src, dst: 'arena', dstOff: dst, bytes: blockBytes(this.g, 'fp16') });
      this.fences.after(COMPUTE, this.slabs.access(dst));
    }
    const tableOff = this.writeTable(entries, prec);
    let uniform = n > 0 ? this.bits[this.ix(l, w.attended[0])] : 0;
    for (let i = 1; i < n && uniform !== 0; i++) if (this.bits[this.ix(l, w.attended[i])] !== uniform) uniform = 0;
    this.ops.push({ o: 'attn', layer: l, tableOff, tokens: w.tokens, uniform });
    const attn = this.mark(COMPUTE);
    for (const acc of reads) this.fences.after(COMPUTE, acc);
    for (const e of extents) {
      this.fences.after(COMPUTE, this.extAcc.get(e)!);
      this.ringAlloc.release(e);
      this.extAcc.delete(e);
    }
    if (this.eagerFences && extents.length) this.fences.recordNow(COMPUTE);
    this.stagedExtents[l] = [];
    this.staged[l].clear();
    this.ops.push({ o: 'gemv', layer: l, lmHead: false });
    if (l === this.plan.initial.layers - 1) this.ops.push({ o: 'gemv', layer: l, lmHead: true });
    const done = this.mark(COMPUTE);
    return { layer: l, pre, ready, attn, done };
  }

  private writeTable(entries: Float64Array, prec: Int32Array): number {
    const need = this.tableEnd + entries.length * 16;
    if (need > this.tables.length) {
      const t = new Uint8Array(Math.max(need, this.tables.length * 2));
      t.set(this.tables.subarray(0, this.tableEnd));
      this.tables = t;
    }
    const view = new DataView(this.tables.buffer, this.tables.byteOffset);
    const at = this.tableEnd;
    for (let i = 0; i < entries.length; i++) {
      view.setBigUint64(at + i * 16, BigInt(entries[i]), true);
      view.setInt32(at + i * 16 + 8, prec[i], true);
      view.setInt32(at + i * 16 + 12, 0, true);
    }
    this.tableEnd = need;
    return at;
  }
}

