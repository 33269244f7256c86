/**
 * The storage tier's disk read again right before a storage cell's runs, with the calibration's own
 * file measurements (calibrate/file-batches.ts) at its quick geometry: the model's FP16 block, the
 * blocks of a 6,144-token layer, 4 layers; reads in the executor's pattern over 4 rounds plus one
 * request per block at the quantized sizes, writes in the executor's pattern over 3 rounds. A lease's
 * virtio disk has read and written at rates differing by up to threefold between its calibration and
 * its cells (lab notes), so the cell keeps what the disk did just before it ran, and a re-simulation can
 * price the cell's file requests with fits of these points in place of the calibration's
 * (`withMeasuredDisk`; validate-resim --disk-as-measured), a diagnostic that takes the disk's drift out.
 */
import { tmpdir } from 'node:os';
import type { HardwareProfile } from '../../sim/hardware/profile.js';
import type { ModelSpec } from '../../sim/models/model.js';
import { openBackend } from '../backend.js';
import { applyFileReadFit, applyFileWriteFit, fileRequestCurve, fitFileBatches } from '../calibrate/calibrate.js';
import { type FileBatchPoint, measureFileBatches, measureFileWriteBatches } from '../calibrate/file-batches.js';
import { quantizedBlockBytes } from '../calibrate/measure.js';
import type { HilOptions } from '../executor/hil-run.js';
import { DEFAULT_IO_THREADS } from '../executor/run-plan.js';
import { blockBytes } from '../kv-format.js';

/** tokens per layer of the probe's file (the quick calibration's file batches) */
export const DISK_PROBE_CONTEXT = 6144;
const LAYERS = 4;
const READ_ROUNDS = 4;
const WRITE_ROUNDS = 3;

export interface DiskProbe {
  /** when it ran (ISO, UTC) */
  at: string;
  direct: boolean;
  threads: number;
  /** the FP16 block's bytes (a file slot rounds it up to 4 KiB) */
  block_bytes: number;
  read: FileBatchPoint[];
  write: FileBatchPoint[];
}

export async function probeDisk(model: ModelSpec, blockTokens: number, groupSize: number, hil: HilOptions): Promise<DiskProbe> {
  const g = { kvHeads: model.kv_heads, blockTokens, headDim: model.head_dim, groupSize };
  const o = {
    dir: hil.nvmeDir ?? tmpdir(),
    threads: hil.ioThreads ?? DEFAULT_IO_THREADS,
    blockBytes: blockBytes(g, 'fp16'),
    blocksPerLayer: Math.ceil(DISK_PROBE_CONTEXT / blockTokens) + 4,
    layers: LAYERS,
    direct: hil.directIo ?? true,
  };
  const b = openBackend(hil.backend, 0, hil.attention);
  try {
    const read = await measureFileBatches(b, { ...o, rounds: READ_ROUNDS, requestBytes: quantizedBlockBytes(g) });
    const write = await measureFileWriteBatches(b, { ...o, rounds: WRITE_ROUNDS });
    return { at: read.at, direct: read.direct, threads: read.threads, block_bytes: o.blockBytes, read: read.points, write: write.points };
  } finally {
    b.close();
  }
}

/**
 * `profile` with its NVMe link's read direction (line and requests below a slot) and write direction
 * fitted to `probes` as the calibration fits its own file batches (every probe's points pooled).
 * Throws when the profile has no NVMe tier or the probes have no batches of a direction.
 */
export function withMeasuredDisk(profile: HardwareProfile, probes: readonly DiskProbe[], source: string): HardwareProfile {
  const read = probes.flatMap((x) => x.read);
  const write = probes.flatMap((x) => x.write);
  if (read.filter((x) => x.kind !== 'sized').length < 2 || write.length < 2) throw new Error(`${source}: the disk probes hold ${read.length} read and ${write.length} write batches; a fit needs 2 of each`);
  const p = structuredClone(profile);
  const by = `the disk as probed right before the cell's runs (${probes.map((x) => x.at).join(', ')})`;
  const rf = fitFileBatches(read);
  applyFileReadFit(p, rf, by, "file-tier reads in the HIL executor's pattern, the calibration's batches", undefined, fileRequestCurve(read, rf, probes[0].block_bytes));
  applyFileWriteFit(p, fitFileBatches(write), by, "file-tier writes in the HIL executor's pattern, the calibration's batches");
  return p;
}
