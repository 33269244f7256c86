/**
 * A move from a host tier into HBM: NVMe blocks are read into their DRAM bounce slots first; then
 * one coalesced copy batch into new slab slots, or, where the bits change, per block a copy into
 * scratch and a conversion into the slot.
 */
import { MEMORY } from './fences.js';
import type { LoweringContext } from './lowering-context.js';
import type { PlannedMove } from './plan.js';

export function lowerPromote(c: LoweringContext, m: PlannedMove): void {
  const l = m.layer;
  const from = m.fromTier;
  const { host, out, places: p } = c;
  const region = host.region(from);
  const size = out.bb(m.fromBits);
  if (host.isFile(from)) {
    out.file('fileRead', m.blocks.map((b) => [host.offset(l, b), size]));
    out.count(host.fileKeys(from, 'read'), size * m.blocks.length);
  }
  const keys = host.pcieKeys(from, true);
  if (m.fromBits === m.toBits) {
    const list: [number, number, number][] = [];
    for (const b of m.blocks) {
      const s = c.slabs.alloc(out.bb(m.toBits), l);
      c.touch(MEMORY, s.acc);
      c.fences.after(MEMORY, s.acc);
      p.slot[p.ix(l, b)] = s.offset;
      list.push([host.offset(l, b), s.offset, size]);
    }
    out.copies(`${m.reason} ${host.names[from]}->${host.names[0]}`, region, 'arena', list, keys);
  } else {
    const m0 = out.mark(MEMORY);
    for (const b of m.blocks) {
      const s = c.slabs.alloc(out.bb(m.toBits), l);
      c.touch(MEMORY, s.acc);
      out.push({ o: 'copy', s: MEMORY, src: region, srcOff: host.offset(l, b), dst: 'scratch', dstOff: 0, bytes: size });
      out.convert('scratch', 0, m.fromBits, 'arena', s.offset, m.toBits);
      c.fences.after(MEMORY, s.acc);
      p.slot[p.ix(l, b)] = s.offset;
    }
    out.memSpans.push([m0, out.mark(MEMORY), `${m.reason} + dequantize`]);
    out.count(keys, size * m.blocks.length);
  }
  for (const b of m.blocks) p.set(l, b, 0, m.toBits);
}
