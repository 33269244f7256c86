/**
 * The host's pace at issuing copies, read in a few milliseconds: lists of LIST_COPIES single copies
 * from consecutive pinned slots into HBM, each list timed on the host from before its first
 * `copy` call to after its last (the copy engine runs them meanwhile; a list stays far inside the
 * stream's queue, so the host never waits for the GPU), the stream drained between lists. The first
 * lists warm the path; the reading is the median over the timed ones, us per copy.
 *
 * The probe is the same wherever it runs, so its readings compare: the calibration takes one right
 * after timing a whole plan's issue (calibrate/measure.ts), and a run takes one right before its steps
 * (executor/run-plan.ts). A re-simulation can scale a cell's issue costs by their ratio
 * (validate/resimulate.ts, hostAsMeasured). Such short lists read the driver call's cost in one of two
 * modes (on an H200 about 1.9 or 3.4 us a copy, switching within one probe), not the pace at which the
 * executor issues a whole plan, so the ratio is a diagnostic of the host's state, not a price.
 */
import type { NativeBackend } from '../addon-types.js';
import { median } from './median.js';

/** copies per list */
export const LIST_COPIES = 256;
/** bytes per copy: an INT8 block of a 16-token Llama-3-8B block (about the quantized blocks' size) */
export const PROBE_COPY_BYTES = 17408;
/** untimed lists before the timed ones */
const WARM_LISTS = 8;
/** timed lists */
const TIMED_LISTS = 15;

export interface HostIssueProbe {
  /** host us per copy, the median of the timed lists */
  copy_us: number;
  /** every timed list's us per copy */
  lists_us: number[];
}

export async function probeHostIssue(b: NativeBackend): Promise<HostIssueProbe> {
  let host: number | undefined;
  let dev: number | undefined;
  const bytes = LIST_COPIES * PROBE_COPY_BYTES;
  try {
    host = b.alloc('pinned', bytes);
    dev = b.alloc('device', bytes);
    const lists_us: number[] = [];
    for (let k = 0; k < WARM_LISTS + TIMED_LISTS; k++) {
      const t0 = performance.now();
      for (let i = 0; i < LIST_COPIES; i++) b.copy('memory', dev, i * PROBE_COPY_BYTES, host, i * PROBE_COPY_BYTES, PROBE_COPY_BYTES);
      const us = ((performance.now() - t0) * 1e3) / LIST_COPIES;
      await b.synchronize();
      if (k >= WARM_LISTS) lists_us.push(us);
    }
    return { copy_us: median(lists_us), lists_us };
  } finally {
    try {
      await b.synchronize();
    } catch {
      /* the error that got us here matters more */
    }
    if (dev !== undefined) b.free(dev);
    if (host !== undefined) b.free(host);
  }
}
