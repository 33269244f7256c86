/**
 * validateTrace: read a whole trace with the streaming reader, which checks the structure,
 * checksums and end record and every row's values (traces/row-values.ts, the writer's checks) —
 * the same reader, with the same checks, that `run`, `sweep`, `hil run` and `trace stats` use.
 * Used by `kvtier trace validate`.
 */
import type { TraceHeader } from './format.js';
import type { StepCheckOptions } from './step-check.js';
import { openTrace } from './trace-reader.js';

export interface TraceValidation {
  ok: true;
  steps: number;
  header: TraceHeader;
  bytes: number;
}

/** Returns { ok: true, ... } or throws an Error naming the file, byte offset, step, layer and field. */
export function validateTrace(path: string, options: StepCheckOptions = {}): TraceValidation {
  const reader = openTrace(path, { massTolerance: options.massTolerance });
  try {
    let n = 0;
    while (reader.readStep() !== null) n++;
    return { ok: true, steps: n, header: reader.header, bytes: reader.fileBytes };
  } finally {
    reader.close();
  }
}
