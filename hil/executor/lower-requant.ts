/** A move within HBM to other bits: each block is converted into a new slab slot and its old slot freed. */
import { MEMORY } from './fences.js';
import type { LoweringContext } from './lowering-context.js';
import type { PlannedMove } from './plan.js';

export function lowerRequant(c: LoweringContext, m: PlannedMove): void {
  const l = m.layer;
  const p = c.places;
  const m0 = c.out.mark(MEMORY);
  for (const b of m.blocks) {
    const old = p.slot[p.ix(l, b)];
    const nu = c.slabs.alloc(c.out.bb(m.toBits), l);
    c.touch(MEMORY, c.slabs.access(old));
    c.touch(MEMORY, nu.acc);
    c.out.convert('arena', old, m.fromBits, 'arena', nu.offset, m.toBits);
    c.fences.after(MEMORY, c.slabs.access(old));
    c.fences.after(MEMORY, nu.acc);
    c.slabs.free(old);
    p.slot[p.ix(l, b)] = nu.offset;
    p.set(l, b, 0, m.toBits);
  }
  c.out.memSpans.push([m0, c.out.mark(MEMORY), `requantize ${m.fromBits}->${m.toBits}b`]);
}
