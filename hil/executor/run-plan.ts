/**
 * Runs a lowered plan on a backend: allocates the tiers (HBM arena, pinned host pool, CXL stand-in,
 * NVMe file), writes every block's initial bytes, enqueues the work of every step on the compute
 * and memory streams without synchronizing (as an inference engine would), and reads the timing
 * events at the end. The host waits only where real data needs it: before a file write from a slot
 * a copy filled (synchronize the memory stream), before a copy that reads what a file read brought
 * (join the reads), and before reusing a slot a file write still reads.
 *
 * Stall, measured: per layer, the compute stream's time between finishing the previous layer and
 * starting this layer's kernels — waiting on memory-stream events (`stall_wait`) or on the host
 * (`host_gap`, e.g. a file read the host had to finish first). Step stall = latency - kernel time.
 */
import type { NativeBackend, NativeFileTier, StreamName } from '../addon-types.js';
import { EventSet } from '../timing/event-set.js';
import { loadHil } from '../load-addon.js';
import { packBlock } from '../block-pack.js';
import { type Precision, blockBytes, codesBytes, kMetaOffset, metaBytes, sectionElems, vMetaOffset, vOffset } from '../kv-format.js';
import type { ModelSpec } from '../../sim/models/model.js';
import type { TraceSpan } from '../../sim/stream.js';
import type { BlockData } from './block-data.js';
import type { LoweredPlan, LowOp, RegionName } from './lowered-plan.js';

export interface MeasuredStep {
  step: number;
  latency_us: number;
  compute_us: number;
  stall_us: number;
  stall_wait_us: number;
  host_gap_us: number;
  transfer_us: number;
  /** file-tier time of the step: file_read_us + file_write_us */
  file_us: number;
  /** wall time of the step's read batches (batched reads: each batch's time; per-request reads: the sum of the requests' times) */
  file_read_us: number;
  /** the step's file writes, each request's own time summed (they run beside the reads) */
  file_write_us: number;
  /**
   * host time of the step spent before its file requests could be issued: waiting for the memory
   * stream (a copy that last used the request's DRAM bounce slot) and for earlier writes from the slot;
   * the file tier is idle while the host waits there unless earlier requests are still in flight
   */
  file_sync_us: number;
  /** how many of those waits synchronized the memory stream */
  file_syncs: number;
  bytes: Record<string, number>;
  /**
   * with RunPlanOptions.waitMarks: time the memory stream stood at its waits on compute-stream
   * fences (event before and after each wait; the second completes when the fence has), the number
   * of such waits, and the memory stream's direction switches (H2D <-> D2H copies, counted from the plan)
   */
  mem_wait_us?: number;
  mem_waits?: number;
  mem_dir_switches?: number;
}

/**
 * I/O threads of the NVMe file tier by default. Measured on the H100 device machine's virtual disk
 * (virtio-blk, 2026-11-22, perf/nvme-bench.c): replaying the executor's own read batches, 32 threads
 * read 1.73 / 1.58 GB/s in two rounds vs 1.61 / 1.52 (16), 1.57 / 1.44 (8), 1.35 / 1.57 (4); random
 * 64 KiB-4 MiB requests 1.84 GB/s (32) vs 1.70-1.73 (4-16); per-step spread the same for all counts.
 */
export const DEFAULT_IO_THREADS = 32;

export interface RunPlanOptions {
  /** directory for the NVMe tier's file */
  nvmeDir: string;
  directIo: boolean;
  /** I/O threads of the file tier (preads in flight at once) */
  ioThreads: number;
  /**
   * true (default): the reads before one fileJoin (a layer's runs) go to the file tier as ONE batch
   * (readBatch: every request queued on the tier's I/O threads together); false: one promise per
   * request (bounded by libuv's 4 worker threads: at most 4 reads in flight)
   */
  fileBatch?: boolean;
  /** distinct weight bytes allocated at most; layers beyond reuse buffers round-robin */
  maxWeightBytes: number;
  traceSteps: number;
  verify: boolean;
  /** measurement aid, default off: record an event on the memory stream before and after each of its waits on compute fences */
  waitMarks?: boolean;
}

export interface RunPlanResult {
  steps: MeasuredStep[];
  spans: TraceSpan[];
  fileDirect: boolean | null;
  fileBufferedReason: string;
  verify?: { checked: number; mismatches: number; firstMismatch?: string };
  setupMs: number;
  weightBuffers: number;
}

const STREAMS: StreamName[] = ['compute', 'memory'];
const PREC: Record<number, Precision> = { 16: 'fp16', 8: 'int8', 4: 'int4', 2: 'int2' };
const CHUNK = 32 << 20;

export async function runPlan(b: NativeBackend, p: LoweredPlan, model: ModelSpec, data: BlockData, o: RunPlanOptions): Promise<RunPlanResult> {
  const t0 = performance.now();
  const g = p.geometry;
  const fp16 = blockBytes(g, 'fp16');
  for (const bits of [8, 4, 2]) {
    const pr = PREC[bits]!;
    if (vOffset(g, pr) !== codesBytes(g, pr) || vMetaOffset(g, pr) !== kMetaOffset(g, pr) + metaBytes(g)) {
      throw new Error(`hil: block layout of ${pr} is padded (K/V sections not contiguous); pick another block size or group size`);
    }
  }
  const regions = new Map<RegionName, number>();
  const owned: number[] = [];
  const alloc = (kind: 'device' | 'pinned', bytes: number) => {
    const r = b.alloc(kind, Math.max(4096, bytes));
    owned.push(r);
    return r;
  };
  let file: NativeFileTier | undefined;
  const events = new EventSet(b);
  const ev = events.make;
  try {
    const usesHost = p.initial.some((x) => x.region === 'dram') || p.steps.some((s) => s.ops.some((x) => (x.o === 'copy' && (x.src === 'dram' || x.dst === 'dram')) || x.o === 'fileRead'));
    regions.set('arena', alloc('device', p.arenaBytes));
    regions.set('fresh', alloc('device', p.fresh.length * fp16));
    regions.set('scratch', alloc('device', p.scratchBytes));
    if (usesHost) regions.set('dram', alloc('pinned', p.hostBytes));
    if (p.usesCxl) regions.set('cxl', alloc('pinned', p.hostBytes));
    const tables = alloc('device', p.tables.length);
    if (p.tables.length) b.write(tables, 0, p.tables);
    if (p.usesNvme) {
      const { addon } = loadHil() as { ok: true; addon: import('../addon-types.js').HilAddon };
      file = new addon.FileTier(b, { path: `${o.nvmeDir}/kvtier-hil-nvme-${process.pid}-${Date.now()}.bin`, bytes: p.hostBytes, direct: o.directIo, threads: o.ioThreads, removeOnClose: true });
    }
    // weights and activations
    const qBytes = model.q_heads * model.head_dim * 4;
    const q = alloc('device', qBytes);
    const out = alloc('device', qBytes);
    const rows = Math.max(8, Math.round(model.weight_bytes_per_layer / 2 / model.hidden));
    const cols = model.hidden;
    const headRows = Math.max(8, Math.round(model.other_weight_bytes / 2 / 2 / model.hidden));
    const x = alloc('device', cols * 4);
    const y = alloc('device', Math.max(rows, headRows) * 4);
    b.write(q, 0, randomFloats(data.seed + 1, qBytes / 4));
    b.write(x, 0, randomFloats(data.seed + 2, cols));
    const wBytes = rows * cols * 2;
    const nW = Math.max(1, Math.min(model.layers, Math.floor(o.maxWeightBytes / wBytes)));
    const weights: number[] = [];
    for (let i = 0; i < nW; i++) {
      const w = alloc('device', wBytes);
      if (i === 0) writeRandomHalves(b, w, wBytes, data.seed + 3);
      else b.copy('compute', w, 0, weights[0], 0, wBytes);
      weights.push(w);
    }
    const head = model.other_weight_bytes > 0 ? alloc('device', headRows * cols * 2) : -1;
    if (head >= 0) writeRandomHalves(b, head, headRows * cols * 2, data.seed + 4);
    await b.synchronize();
    // initial bytes of every block, and the fresh KV of blocks created while decoding
    await writeInitial(b, p, data, regions, file);
    const freshBuf = new Uint32Array(Math.min(p.fresh.length, Math.max(1, Math.floor(CHUNK / fp16))) * (fp16 / 4));
    for (let i = 0; i < p.fresh.length; ) {
      const n = Math.min(p.fresh.length - i, freshBuf.length / (fp16 / 4));
      for (let k = 0; k < n; k++) data.fill(p.fresh[i + k].layer, p.fresh[i + k].block, freshBuf, (k * fp16) / 4);
      b.write(regions.get('fresh')!, i * fp16, new Uint8Array(freshBuf.buffer, 0, n * fp16));
      i += n;
    }
    await b.synchronize();
    const setupMs = performance.now() - t0;

    // events: timing marks and fences
    const marks = Array.from({ length: p.marks }, ev);
    const fenceEv: number[][] = [Array.from({ length: p.fences[0] + 1 }, ev), Array.from({ length: p.fences[1] + 1 }, ev)];
    const base = ev();
    b.record('compute', base);
    b.record('memory', ev()); // nothing to wait on, but both streams start from here
    // optional: per step, [before, after] event pairs around the memory stream's waits on compute
    const waitEv: [number, number][][] = p.steps.map(() => []);
    const slot = p.slotBytes;
    const pendingWrite = new Map<number, Promise<unknown>>();
    let pendingReads: Promise<{ ms: number }>[] = [];
    let batchReads: number[] = [];
    const fileBatch = o.fileBatch ?? true;
    let memIssued = 0;
    let memSynced = 0;
    const memSeq = new Map<number, number>();
    const fileMs = new Float64Array(p.steps.length);
    const fileReadMs = new Float64Array(p.steps.length);
    const fileSyncMs = new Float64Array(p.steps.length);
    const fileSyncs = new Uint32Array(p.steps.length);
    const syncMemoryIfNeeded = async (off: number, bytes: number, si: number) => {
      for (let s = Math.floor(off / slot); s < Math.ceil((off + bytes) / slot); s++) {
        if ((memSeq.get(s) ?? 0) > memSynced) {
          const at = memIssued;
          const t = performance.now();
          await b.synchronize('memory');
          fileSyncMs[si] += performance.now() - t;
          fileSyncs[si]++;
          memSynced = at;
          return;
        }
      }
    };
    const awaitWrites = async (off: number, bytes: number, si = -1) => {
      for (let s = Math.floor(off / slot); s < Math.ceil((off + bytes) / slot); s++) {
        const w = pendingWrite.get(s);
        if (w) {
          const t = performance.now();
          await w;
          if (si >= 0) fileSyncMs[si] += performance.now() - t;
          pendingWrite.delete(s);
        }
      }
    };
    const r = (name: RegionName) => {
      const id = regions.get(name);
      if (id === undefined) throw new Error(`hil: region ${name} not allocated`);
      return id;
    };
    const n2 = 2 * sectionElems(g);
    for (let si = 0; si < p.steps.length; si++) {
      for (const op of p.steps[si].ops) {
        await issue(op, si);
      }
    }
    async function issue(op: LowOp, si: number): Promise<void> {
      switch (op.o) {
        case 'copy': {
          if (op.s === 1) {
            if (op.dst === 'dram') await awaitWrites(op.dstOff, op.bytes);
            memIssued++;
            for (const [reg, off] of [[op.src, op.srcOff], [op.dst, op.dstOff]] as const) {
              if (reg === 'dram') for (let s = Math.floor(off / slot); s < Math.ceil((off + op.bytes) / slot); s++) memSeq.set(s, memIssued);
            }
          }
          b.copy(STREAMS[op.s], r(op.dst), op.dstOff, r(op.src), op.srcOff, op.bytes);
          return;
        }
        case 'quant':
          b.quantize('memory', { src: r(op.src), srcOffset: op.srcOff, codes: r(op.dst), codesOffset: op.dstOff, meta: r(op.dst), metaOffset: op.dstOff + kMetaOffset(g, PREC[op.bits]!), n: n2, bits: op.bits, groupSize: g.groupSize });
          return;
        case 'dequant':
          b.dequantize('memory', { codes: r(op.src), codesOffset: op.srcOff, meta: r(op.src), metaOffset: op.srcOff + kMetaOffset(g, PREC[op.bits]!), dst: r(op.dst), dstOffset: op.dstOff, n: n2, bits: op.bits, groupSize: g.groupSize });
          return;
        case 'mark':
          b.record(STREAMS[op.s], marks[op.id]);
          return;
        case 'record':
          b.record(STREAMS[op.s], fenceEv[op.s][op.fence]);
          return;
        case 'wait':
          if (o.waitMarks && op.s === 1) {
            const pair: [number, number] = [ev(), ev()];
            b.record('memory', pair[0]);
            b.waitEvent(STREAMS[op.s], fenceEv[op.on][op.fence]);
            b.record('memory', pair[1]);
            waitEv[si].push(pair);
            return;
          }
          b.waitEvent(STREAMS[op.s], fenceEv[op.on][op.fence]);
          return;
        case 'attn':
          b.attention('compute', {
            arena: r('arena'),
            arenaBytes: p.arenaBytes,
            table: tables,
            tableOffset: op.tableOff,
            q,
            out,
            qHeads: model.q_heads,
            kvHeads: model.kv_heads,
            headDim: model.head_dim,
            blockTokens: g.blockTokens,
            groupSize: g.groupSize,
            contextTokens: op.tokens,
            // the table's promise (checked where the table is host-readable): the cuda backend then runs
            // the tensor-core kernel for uniform INT4 tables, as the calibration's attention benchmark does
            ...(op.uniform ? { uniformPrecision: PREC[op.uniform]! } : {}),
          });
          return;
        case 'gemv':
          if (op.lmHead) {
            if (head >= 0) b.gemv('compute', { w: head, x, y, rows: headRows, cols });
          } else {
            b.gemv('compute', { w: weights[op.layer % weights.length], x, y, rows, cols });
          }
          return;
        case 'fileRead': {
          await awaitWrites(op.offset, op.bytes, si);
          await syncMemoryIfNeeded(op.offset, op.bytes, si);
          // the file offset is the DRAM slot's offset: the slot is the bounce buffer
          if (fileBatch) batchReads.push(op.offset, op.offset, op.bytes);
          else pendingReads.push(file!.read(r('dram'), op.offset, op.offset, op.bytes));
          return;
        }
        case 'fileJoin': {
          if (batchReads.length) {
            const res = await file!.readBatch(r('dram'), new Float64Array(batchReads));
            batchReads = [];
            fileMs[si] += res.ms;
            fileReadMs[si] += res.ms;
            return;
          }
          const res = await Promise.all(pendingReads);
          pendingReads = [];
          for (const x of res) {
            fileMs[si] += x.ms;
            fileReadMs[si] += x.ms;
          }
          return;
        }
        case 'fileWrite': {
          await awaitWrites(op.offset, op.bytes, si);
          await syncMemoryIfNeeded(op.offset, op.bytes, si);
          const w = file!.write(r('dram'), op.offset, op.offset, op.bytes).then((x) => {
            fileMs[si] += x.ms;
          });
          for (let s = Math.floor(op.offset / slot); s < Math.ceil((op.offset + op.bytes) / slot); s++) pendingWrite.set(s, w);
          return;
        }
      }
    }
    await b.synchronize();
    await Promise.all(pendingWrite.values());
    // measured times (us from the base event)
    const at = (id: number) => b.elapsedMs(base, marks[id]) * 1000;
    const steps: MeasuredStep[] = [];
    const spans: TraceSpan[] = [];
    let prevEnd = 0;
    p.steps.forEach((s, si) => {
      let compute = 0;
      let wait = 0;
      for (const m of s.layers) {
        const pre = at(m.pre);
        const ready = at(m.ready);
        const attn = at(m.attn);
        const done = at(m.done);
        compute += done - ready;
        wait += ready - pre;
        if (si < o.traceSteps) {
          spans.push({ stream: 'compute', name: 'attention', cat: 'kernel', start: ready, end: attn, args: { step: s.step, layer: m.layer } });
          spans.push({ stream: 'compute', name: 'linear', cat: 'kernel', start: attn, end: done, args: { step: s.step, layer: m.layer } });
        }
      }
      let transfer = 0;
      for (const [a, z, label] of s.memSpans) {
        const ta = at(a);
        const tz = at(z);
        transfer += tz - ta;
        if (si < o.traceSteps) spans.push({ stream: 'memory', name: label, cat: 'copy', start: ta, end: tz, args: { step: s.step } });
      }
      const end = s.layers.length ? at(s.layers[s.layers.length - 1].done) : prevEnd;
      const latency = end - prevEnd;
      prevEnd = end;
      const stall = Math.max(0, latency - compute);
      const waitStats: Partial<MeasuredStep> = {};
      if (o.waitMarks) {
        let w = 0;
        for (const [x, y] of waitEv[si]) w += b.elapsedMs(x, y) * 1000;
        waitStats.mem_wait_us = w;
        waitStats.mem_waits = waitEv[si].length;
        waitStats.mem_dir_switches = directionSwitches(s.ops);
      }
      steps.push({
        step: s.step,
        latency_us: latency,
        compute_us: compute,
        stall_us: stall,
        stall_wait_us: wait,
        host_gap_us: Math.max(0, stall - wait),
        transfer_us: transfer + fileMs[si] * 1000,
        file_us: fileMs[si] * 1000,
        file_read_us: fileReadMs[si] * 1000,
        file_write_us: (fileMs[si] - fileReadMs[si]) * 1000,
        file_sync_us: fileSyncMs[si] * 1000,
        file_syncs: fileSyncs[si],
        bytes: s.bytes,
        ...waitStats,
      });
    });
    const verify = o.verify ? await verifyBlocks(b, p, data, regions, file) : undefined;
    return { steps, spans, fileDirect: file ? file.direct : null, fileBufferedReason: file?.bufferedReason ?? '', verify, setupMs, weightBuffers: nW };
  } finally {
    try {
      await b.synchronize();
    } catch {
      /* the error that got us here matters more */
    }
    file?.close();
    events.destroyAll();
    for (const id of owned) b.free(id);
  }
}

/** H2D <-> D2H changes between consecutive copies on the memory stream (host-to-host copies do not count) */
export function directionSwitches(ops: readonly LowOp[]): number {
  let last = '';
  let n = 0;
  for (const op of ops) {
    if (op.o !== 'copy' || op.s !== 1) continue;
    const toDevice = op.dst === 'arena' || op.dst === 'scratch';
    const fromDevice = op.src === 'arena' || op.src === 'scratch' || op.src === 'fresh';
    if (toDevice === fromDevice) continue;
    const dir = toDevice ? 'h2d' : 'd2h';
    if (last && dir !== last) n++;
    last = dir;
  }
  return n;
}

/** bytes of block (l, b) at `bits`, as the tiers must hold them */
export function expectedBlock(p: LoweredPlan, data: BlockData, l: number, blk: number, bits: number): Uint8Array {
  const v = data.block(l, blk);
  const g = p.geometry;
  if (bits === 16) return new Uint8Array(v.buffer, 0, blockBytes(g, 'fp16'));
  const half = sectionElems(g);
  return packBlock(g, PREC[bits]!, v.subarray(0, half), v.subarray(half));
}

async function writeInitial(b: NativeBackend, p: LoweredPlan, data: BlockData, regions: Map<RegionName, number>, file?: NativeFileTier): Promise<void> {
  const g = p.geometry;
  const fp16 = blockBytes(g, 'fp16');
  let buf = new Uint8Array(CHUNK + p.slotBytes);
  let run: { region: RegionName; start: number; end: number; file: boolean } | null = null;
  const flush = async () => {
    if (!run) return;
    b.write(regions.get(run.region)!, run.start, buf.subarray(0, run.end - run.start));
    if (run.file) await file!.write(regions.get(run.region)!, run.start, run.start, Math.ceil((run.end - run.start) / 4096) * 4096);
    run = null;
  };
  const words = new Uint32Array(fp16 / 4);
  for (const x of p.initial) {
    const size = x.bits === 16 ? fp16 : blockBytes(g, PREC[x.bits]!);
    const span = x.region === 'arena' ? size : p.slotBytes;
    if (!run || run.region !== x.region || run.file !== x.file || run.end !== x.offset || run.end - run.start + span > CHUNK) {
      await flush();
      run = { region: x.region, start: x.offset, end: x.offset, file: x.file };
    }
    const at = x.offset - run!.start;
    if (x.bits === 16) {
      data.fill(x.layer, x.block, words);
      buf.set(new Uint8Array(words.buffer), at);
    } else {
      buf.set(expectedBlock(p, data, x.layer, x.block, x.bits), at);
    }
    run!.end = x.offset + span;
  }
  await flush();
  buf = new Uint8Array(0);
}

async function verifyBlocks(b: NativeBackend, p: LoweredPlan, data: BlockData, regions: Map<RegionName, number>, file?: NativeFileTier) {
  const { tier, bits, slot } = p.final;
  let checked = 0;
  let mismatches = 0;
  let firstMismatch: string | undefined;
  const maxBlocks = p.maxBlocks;
  for (let i = 0; i < tier.length; i++) {
    const t = tier[i];
    if (t < 0) continue;
    const l = Math.floor(i / maxBlocks);
    const blk = i % maxBlocks;
    const want = expectedBlock(p, data, l, blk, bits[i]);
    let got: Uint8Array;
    if (t === 0) got = b.read(regions.get('arena')!, slot[i], want.length);
    else {
      const region = p.hostRegionOf[t] ?? 'dram';
      const off = i * p.slotBytes;
      if (p.nvmeTier === t) await file!.read(regions.get('dram')!, off, off, Math.ceil(want.length / 4096) * 4096);
      got = b.read(regions.get(region)!, off, want.length);
    }
    checked++;
    if (!Buffer.from(got).equals(Buffer.from(want))) {
      mismatches++;
      firstMismatch ??= `layer ${l} block ${blk} (tier ${t}, ${bits[i]} bits)`;
    }
  }
  return { checked, mismatches, firstMismatch };
}

function randomFloats(seed: number, n: number): Float32Array {
  let a = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    out[i] = a / 4294967296 - 0.5;
  }
  return out;
}

function writeRandomHalves(b: NativeBackend, region: number, bytes: number, seed: number): void {
  const chunk = new Uint32Array(Math.min(bytes, CHUNK) / 4);
  let a = seed >>> 0;
  for (let i = 0; i < chunk.length; i++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    chunk[i] = a & 0x3bff3bff; // small positive and negative-free halves: no Inf/NaN
  }
  for (let off = 0; off < bytes; off += chunk.byteLength) {
    const n = Math.min(chunk.byteLength, bytes - off);
    b.write(region, off, new Uint8Array(chunk.buffer, 0, n));
  }
}
