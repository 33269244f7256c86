/**
 * File-tier reads in the HIL executor's own request pattern, for calibrating the NVMe read link.
 * The executor keeps block (l, b) of the NVMe tier at file offset (l * M + b) * slot (the offset of its
 * DRAM bounce slot) and reads a layer's offloaded blocks as one batch: one request per run of
 * consecutive blocks, all handed to the file tier at once (readBatch), then joined. Here the same:
 * a file of `fileLayers` x M slots (a run's file holds every layer of the model; the measured `layers`
 * are spread evenly over them), and per measured layer a batch that covers ~80% of the layer's blocks in runs of
 * 1, 2, 4, 9, 24 blocks or one run (gaps of a quarter of the run length, at least one block), each
 * followed by a small batch of 1..16 single blocks (as the executor's fetches of just-promoted blocks),
 * round after round. Then, per size in `requestBytes` (the model's quantized blocks, whose requests
 * never merge: a quantized block does not fill its slot), one batch per layer of one request per block
 * over ~80% of the layer, each the size rounded up to 4 KiB at its block's slot. Requests per batch
 * are the runs (as the simulator counts them); the tier splits them into chunkBytes pieces on its I/O
 * threads as the executor's reads are split. With `h2dCopies` each batch's runs are then copied to the
 * device on the memory stream, one copy per run, without waiting, as the executor copies a joined
 * batch from its DRAM slots to HBM while the next batch is read (default off: the measurement that
 * was validated on the device).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { NativeBackend } from '../addon-types.js';
import { loadHil } from '../load-addon.js';
import { align } from '../executor/copy-runs.js';

export interface FileBatchPoint {
  requests: number;
  bytes: number;
  us: number;
  /** 'layer': a layer's runs; 'small': single blocks (a fetch of just-promoted blocks); 'sized': single requests smaller than a slot */
  kind: 'layer' | 'small' | 'sized';
  /** bytes of each request ('sized' batches; in the others a run's blocks x the slot) */
  request_bytes?: number;
  /** blocks per run */
  run_blocks: number;
  /**
   * reads: the host's wall time from handing the batch to the tier to going on after it, less `us`
   * (the batch on the tier's threads)
   */
  host_us?: number;
  layer: number;
  round: number;
}

export interface FileBatchOptions {
  dir: string;
  threads: number;
  blockBytes: number;
  /** blocks per layer (M) */
  blocksPerLayer: number;
  /** layers measured */
  layers: number;
  /** layers of slots the file holds (default `layers`); the measured layers are spread evenly over them */
  fileLayers?: number;
  rounds: number;
  /** copy each batch's runs to the device after it lands, as the executor does (default false) */
  h2dCopies?: boolean;
  /** ask for O_DIRECT, as the executor's file tier does unless told otherwise (default true) */
  direct?: boolean;
  /** sizes of requests smaller than a slot to time after the rounds (bytes; rounded up to 4 KiB; none by default) */
  requestBytes?: readonly number[];
}

export interface FileBatchResult {
  points: FileBatchPoint[];
  direct: boolean;
  threads: number;
  file_bytes: number;
  /** wall time of the measured batches, and their overall rate */
  ms: number;
  GBps: number;
  /** when it ran (ISO, UTC) */
  at: string;
  h2d_copies: boolean;
}

/** blocks per run of the layer batches, round robin over the layers (0: one run of ~80% of the layer) */
export const RUN_BLOCKS = [1, 2, 4, 9, 24, 0];

/** the runs ([first block, blocks]) of one layer's batch: ~80% of M in runs of `run` blocks (0: one run) */
export function layerRuns(M: number, run: number, start: number): [number, number][] {
  if (run === 0 || run >= M * 0.8) {
    const n = Math.max(1, Math.floor(M * 0.8));
    return [[Math.min(start, M - n), n]];
  }
  const gap = Math.max(1, Math.round(run / 4));
  const out: [number, number][] = [];
  for (let b = start % (run + gap); b + run <= M; b += run + gap) out.push([b, run]);
  if (out.length === 0) out.push([0, run]);
  return out;
}

/** the file layer of measured layer `l`: the measured layers spread evenly over the file's layers */
export function fileLayerOf(o: Pick<FileBatchOptions, 'layers' | 'fileLayers'>, l: number): number {
  return Math.floor((l * (o.fileLayers ?? o.layers)) / o.layers);
}

/** the file of `fileLayers` x M block slots both measurements use, its tier, and the slot size */
function batchFile(b: NativeBackend, o: FileBatchOptions, name: string) {
  const loaded = loadHil();
  if (!loaded.ok) throw new Error(loaded.reasons.join('; '));
  if (o.fileLayers !== undefined && !(Number.isInteger(o.fileLayers) && o.fileLayers >= o.layers)) throw new Error(`file batches: fileLayers ${o.fileLayers} must be an integer of at least layers (${o.layers})`);
  const slot = align(o.blockBytes, 4096);
  const fileBytes = (o.fileLayers ?? o.layers) * o.blocksPerLayer * slot;
  const path = join(o.dir, `kvtier-${name}-${process.pid}-${Date.now()}.bin`);
  const tier = new loaded.addon.FileTier(b, { path, bytes: fileBytes, threads: o.threads, direct: o.direct ?? true, removeOnClose: true });
  return { slot, M: o.blocksPerLayer, fileBytes, path, tier };
}

/** the batches' pseudo-random draws (a linear congruential generator from `seed`) */
function draws(seed: number): (n: number) => number {
  let x = seed;
  return (n) => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x % n;
  };
}

export async function measureFileBatches(b: NativeBackend, o: FileBatchOptions): Promise<FileBatchResult> {
  const { slot, M, fileBytes, path, tier } = batchFile(b, o, 'file-batches');
  const copies = o.h2dCopies ?? false;
  let pool = -1;
  let dev = -1;
  const points: FileBatchPoint[] = [];
  let wall = 0;
  let total = 0;
  try {
    pool = b.alloc('pinned', fileBytes);
    if (copies) dev = b.alloc('device', M * slot);
    // real bytes in every slot (an extent never written reads as zeros without touching the disk)
    const fill = new Uint8Array(Math.min(fileBytes, 8 << 20)).map((_, i) => (i * 2654435761) >>> 24);
    for (let off = 0; off < fileBytes; off += fill.length) b.write(pool, off, fill.subarray(0, Math.min(fill.length, fileBytes - off)));
    for (let off = 0; off < fileBytes; off += 64 << 20) await tier.write(pool, off, off, Math.min(64 << 20, fileBytes - off), { chunkBytes: 8 << 20, sync: off + (64 << 20) >= fileBytes });
    // the batch's time on the tier's threads (us), and the host's wall time around it beyond that (host)
    let host = 0;
    const read = async (spans: number[]) => {
      const t0 = performance.now();
      const ms = (await tier.readBatch(pool, new Float64Array(spans))).ms;
      host = (performance.now() - t0 - ms) * 1000;
      if (copies) {
        // [regionOffset, fileOffset, bytes] per run: packed into the device buffer, one copy per run
        let at = 0;
        for (let i = 0; i < spans.length; i += 3) {
          b.copy('memory', dev, at, pool, spans[i], spans[i + 2]);
          at += spans[i + 2];
        }
      }
      return ms * 1000;
    };
    // warm-up: one layer
    await read(layerRuns(M, 9, 0).flatMap(([s, n]) => [s * slot, s * slot, n * slot]));
    const rnd = draws(12345);
    for (let round = 0; round < o.rounds; round++) {
      await b.synchronize(); // the copies of the last round have read their slots
      for (let l = 0; l < o.layers; l++) {
        const run = RUN_BLOCKS[(l + round) % RUN_BLOCKS.length];
        const fl = fileLayerOf(o, l);
        const base = fl * M;
        const runs = layerRuns(M, run, rnd(M));
        const spans = runs.flatMap(([s, n]) => [(base + s) * slot, (base + s) * slot, n * slot]);
        const us = await read(spans);
        const bytes = runs.reduce((a, [, n]) => a + n * slot, 0);
        points.push({ requests: runs.length, bytes, us, kind: 'layer', run_blocks: runs[0][1], layer: fl, round, host_us: host });
        wall += us;
        total += bytes;
        // the small batch: single blocks of the next layer
        const k = 1 + rnd(16);
        const nb = fileLayerOf(o, (l + 1) % o.layers);
        const small: number[] = [];
        for (let i = 0; i < k; i++) {
          const s = (nb * M + ((rnd(M) >> 1) << 1)) * slot; // even blocks: never adjacent, k requests
          if (!small.some((x, j) => j % 3 === 1 && x === s)) small.push(s, s, slot);
        }
        const usSmall = await read(small);
        points.push({ requests: small.length / 3, bytes: (small.length / 3) * slot, us: usSmall, kind: 'small', run_blocks: 1, layer: nb, round, host_us: host });
        wall += usSmall;
        total += (small.length / 3) * slot;
      }
    }
    // requests smaller than a slot, each size rounded up to 4 KiB once, ascending (kept out of the overall rate above)
    for (const req of [...new Set((o.requestBytes ?? []).map((x) => align(x, 4096)))].sort((x, y) => x - y)) {
      if (req >= slot) continue;
      await b.synchronize();
      for (let l = 0; l < o.layers; l++) {
        const [[first, n]] = layerRuns(M, 0, rnd(M));
        const fl = fileLayerOf(o, l);
        const spans: number[] = [];
        for (let k = first; k < first + n; k++) spans.push((fl * M + k) * slot, (fl * M + k) * slot, req);
        const us = await read(spans);
        points.push({ requests: n, bytes: n * req, us, kind: 'sized', run_blocks: 1, request_bytes: req, layer: fl, round: o.rounds, host_us: host });
      }
    }
    await b.synchronize();
    return { points, direct: tier.direct, threads: tier.threads, file_bytes: fileBytes, ms: wall / 1000, GBps: total / wall / 1e3, at: new Date().toISOString(), h2d_copies: copies };
  } finally {
    try {
      await b.synchronize();
    } catch {
      /* the error that got us here matters more */
    }
    tier.close();
    if (dev >= 0) b.free(dev);
    if (pool >= 0) b.free(pool);
    rmSync(path, { force: true });
  }
}

/**
 * File-tier writes in the HIL executor's own pattern: a layer's demoted blocks are written from their
 * DRAM bounce slots one request per run, every request started at once without waiting for the one
 * before (the executor's `fileWrite` ops), and the batch is done when all are. The same file layout and
 * layer runs as measureFileBatches (runs of 1, 2, 4, 9, 24 blocks or one run, ~80% of a layer), one
 * batch per layer, `rounds` rounds; each batch timed on the host clock from its first start to its
 * last completion. Requests per batch are the runs, as the simulator counts them.
 */
export async function measureFileWriteBatches(b: NativeBackend, o: FileBatchOptions): Promise<FileBatchResult> {
  const { slot, M, fileBytes, path, tier } = batchFile(b, o, 'file-write-batches');
  let pool = -1;
  const points: FileBatchPoint[] = [];
  let wall = 0;
  let total = 0;
  try {
    pool = b.alloc('pinned', fileBytes);
    const fill = new Uint8Array(Math.min(fileBytes, 8 << 20)).map((_, i) => (i * 2246822519) >>> 24);
    for (let off = 0; off < fileBytes; off += fill.length) b.write(pool, off, fill.subarray(0, Math.min(fill.length, fileBytes - off)));
    const writeRuns = async (runs: [number, number][], base: number): Promise<number> => {
      const t0 = performance.now();
      await Promise.all(runs.map(([s, n]) => tier.write(pool, (base + s) * slot, (base + s) * slot, n * slot)));
      return (performance.now() - t0) * 1000;
    };
    // warm-up: one layer
    await writeRuns(layerRuns(M, 9, 0), 0);
    const rnd = draws(54321);
    for (let round = 0; round < o.rounds; round++) {
      for (let l = 0; l < o.layers; l++) {
        const run = RUN_BLOCKS[(l + round) % RUN_BLOCKS.length];
        const runs = layerRuns(M, run, rnd(M));
        const fl = fileLayerOf(o, l);
        const us = await writeRuns(runs, fl * M);
        const bytes = runs.reduce((a, [, n]) => a + n * slot, 0);
        points.push({ requests: runs.length, bytes, us, kind: 'layer', run_blocks: runs[0][1], layer: fl, round });
        wall += us;
        total += bytes;
      }
    }
    return { points, direct: tier.direct, threads: tier.threads, file_bytes: fileBytes, ms: wall / 1000, GBps: total / wall / 1e3, at: new Date().toISOString(), h2d_copies: false };
  } finally {
    tier.close();
    if (pool >= 0) b.free(pool);
    rmSync(path, { force: true });
  }
}

