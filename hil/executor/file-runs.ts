/**
 * File-tier requests of one batch: (offset, bytes) pairs sorted by offset and merged where the next
 * starts at the previous one's 4 KiB-aligned end; every request is 4 KiB-aligned. Reads end with a
 * join (the host waits for them before a copy reads their bounce slots).
 */
import { align } from './copy-runs.js';
import type { LowOp } from './lowered-plan.js';

export function fileRuns(kind: 'fileRead' | 'fileWrite', list: readonly [number, number][]): LowOp[] {
  if (list.length === 0) return [];
  const ops: LowOp[] = [];
  const sorted = [...list].sort((a, b) => a[0] - b[0]);
  let [off, n] = sorted[0];
  for (let i = 1; i < sorted.length; i++) {
    const [o2, n2] = sorted[i];
    if (o2 === off + align(n, 4096)) n = o2 - off + n2;
    else {
      ops.push({ o: kind, offset: off, bytes: align(n, 4096) });
      [off, n] = [o2, n2];
    }
  }
  ops.push({ o: kind, offset: off, bytes: align(n, 4096) });
  if (kind === 'fileRead') ops.push({ o: 'fileJoin' });
  return ops;
}
