/**
 * validateTrace: read a whole trace with every check the reader makes (structure, checksums,
 * end record) plus the writer's value checks on every step (StepChecker). Used by `kvtier trace validate`.
 */
import type { TraceHeader } from './format.js';
import { StepChecker, type StepCheckOptions } from './step-check.js';
import { openTrace } from './trace-reader.js';

export interface TraceValidation {
  ok: true;
  steps: number;
  header: TraceHeader;
  bytes: number;
}

/** Returns { ok: true, ... } or throws an Error naming the file, byte offset, step, layer and field. */
export function validateTrace(path: string, options: StepCheckOptions = {}): TraceValidation {
  const reader = openTrace(path);
  try {
    const checker = new StepChecker(reader.header, options);
    let n = 0;
    for (let s = reader.readStep(); s !== null; s = reader.readStep()) {
      checker.check(s, n, `${path}: record for step ${n} at byte ${reader.recordOffset}`);
      n++;
    }
    return { ok: true, steps: n, header: reader.header, bytes: reader.fileBytes };
  } finally {
    reader.close();
  }
}
