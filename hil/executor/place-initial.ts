/** Where every block starts: resident blocks get slab slots in the arena, offloaded ones their host slot (and file offset on NVMe). */
import type { InitialBlock } from './lowered-plan.js';
import type { LoweringContext } from './lowering-context.js';

export function placeInitial(c: LoweringContext): InitialBlock[] {
  const out: InitialBlock[] = [];
  const { layers } = c.plan.initial;
  const p = c.places;
  for (let l = 0; l < layers; l++) {
    for (let b = 0; b < c.M; b++) {
      const t = p.tier[p.ix(l, b)];
      if (t < 0) continue;
      const bits = p.bits[p.ix(l, b)];
      if (t === 0) {
        const s = c.slabs.alloc(c.out.bb(bits), l);
        p.slot[p.ix(l, b)] = s.offset;
        out.push({ layer: l, block: b, bits, region: 'arena', offset: s.offset, file: false });
      } else {
        const region = c.host.region(t);
        out.push({ layer: l, block: b, bits, region, offset: c.host.offset(l, b), file: c.host.isFile(t) });
      }
    }
  }
  return out;
}
