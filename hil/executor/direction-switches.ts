import type { LowOp } from './lowered-plan.js';

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
