/**
 * The storage tier's disk read again right before a storage cell's runs, with the calibration's own
 * file measurements (calibrate/file-batches.ts) at the calibration's geometry (measure.ts
 * fileBatchOptions: the model's FP16 block of 16 tokens, the blocks of a layer at the calibration's file
 * context, 4 layers for a quick calibration or every layer): reads in the executor's pattern over 4
 * rounds plus one request per block at the quantized sizes, writes in the executor's pattern over the
 * calibration's rounds. A lease's virtio disk has read and written at rates differing by up to
 * threefold between its calibration and its cells (lab notes), so the cell keeps what the disk did just
 * before it ran, and a re-simulation can price the cell's file requests with fits of these points in
 * place of the calibration's (`withMeasuredDisk`; validate-resim --disk-as-measured), a diagnostic.
 */
import { tmpdir } from 'node:os';
import type { HardwareProfile } from '../../sim/hardware/profile.js';
import type { ModelSpec } from '../../sim/models/model.js';
import { openBackend } from '../backend.js';
import { applyFileReadFit, applyFileWriteFit, CALIBRATION_BLOCK_TOKENS, fileRequestCurve, fitFileBatches, fitFileReadBatches, readBatchForm } from '../calibrate/calibrate.js';
import { type FileBatchPoint, measureFileBatches, measureFileWriteBatches } from '../calibrate/file-batches.js';
import { fileBatchOptions, WRITE_ROUNDS } from '../calibrate/measure.js';
import type { HilOptions } from '../executor/hil-run.js';
import { DEFAULT_IO_THREADS } from '../executor/run-plan.js';

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

/**
 * `calibration.quick` and `fileContext` as the profile's calibration had them (its points' file_context;
 * absent: fileBatchOptions' default for the mode)
 */
export async function probeDisk(model: ModelSpec, groupSize: number, calibration: { quick: boolean; fileContext?: number }, hil: HilOptions): Promise<DiskProbe> {
  const o = fileBatchOptions({ model, blockTokens: CALIBRATION_BLOCK_TOKENS, groupSize, quick: calibration.quick, fileDir: hil.nvmeDir ?? tmpdir() }, hil.ioThreads ?? DEFAULT_IO_THREADS, calibration.fileContext);
  const b = openBackend(hil.backend, 0, hil.attention);
  try {
    const read = await measureFileBatches(b, o);
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
  const lines = read.filter((x) => x.kind !== 'sized').length;
  if (lines < 2 || write.length < 2) throw new Error(`${source}: the disk probes hold ${lines} read batches of whole blocks and ${write.length} write batches; a fit needs 2 of each`);
  const p = structuredClone(profile);
  const by = `the disk as probed right before the cell's runs (${probes.map((x) => x.at).join(', ')})`;
  const rf = fitFileReadBatches(read);
  applyFileReadFit(p, rf, by, "file-tier reads in the HIL executor's pattern, the calibration's batches", readBatchForm(rf), fileRequestCurve(read, rf, probes[0].block_bytes));
  applyFileWriteFit(p, fitFileBatches(write), by, "file-tier writes in the HIL executor's pattern, the calibration's batches");
  return p;
}
