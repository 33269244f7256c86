/**
 * A move from HBM to a host tier: one coalesced copy batch from the slab slots (a spill copies the
 * block's fresh FP16 KV instead), or, where the bits change, per block a conversion into scratch and
 * a copy to the host slot; NVMe blocks are then written from their DRAM slots. Slab slots are freed.
 */
import { MEMORY } from './fences.js';
import type { LoweringContext } from './lowering-context.js';
import type { PlannedMove } from './plan.js';

export function lowerDemote(c: LoweringContext, m: PlannedMove): void {
  const l = m.layer;
  const to = m.toTier;
  const { host, out, places: p } = c;
  const region = host.region(to);
  const size = out.bb(m.toBits);
  const keys = host.pcieKeys(to, false);
  const spill = m.reason === 'spill';
  if (m.fromBits === m.toBits || spill) {
    const list: [number, number, number][] = [];
    for (const b of m.blocks) {
      if (spill) {
        // RotateKV: a block created below HBM is stored rotated too
        if (c.rotation) out.push({ o: 'rotate', s: MEMORY, what: 'block', region: 'fresh', offset: c.fresh.offset(l, b) });
        list.push([c.fresh.offset(l, b), host.offset(l, b), c.fp16Bytes]);
        continue;
      }
      const off = p.slot[p.ix(l, b)];
      c.touch(MEMORY, c.slabs.access(off));
      c.fences.after(MEMORY, c.slabs.access(off));
      list.push([off, host.offset(l, b), size]);
    }
    out.copies(`${m.reason} ${host.names[0]}->${host.names[to]}`, spill ? 'fresh' : 'arena', region, list, keys);
  } else {
    const m0 = out.mark(MEMORY);
    for (const b of m.blocks) {
      const off = p.slot[p.ix(l, b)];
      c.touch(MEMORY, c.slabs.access(off));
      out.convert('arena', off, m.fromBits, 'scratch', 0, m.toBits);
      out.push({ o: 'copy', s: MEMORY, src: 'scratch', srcOff: 0, dst: region, dstOff: host.offset(l, b), bytes: size });
      c.fences.after(MEMORY, c.slabs.access(off));
    }
    out.memSpans.push([m0, out.mark(MEMORY), `quantize + ${m.reason}`]);
    out.count(keys, size * m.blocks.length);
  }
  if (host.isFile(to)) {
    out.file('fileWrite', m.blocks.map((b) => [host.offset(l, b), spill ? c.fp16Bytes : size]));
    out.count(host.fileKeys(to, 'write'), size * m.blocks.length);
  }
  for (const b of m.blocks) {
    if (!spill) {
      c.slabs.free(p.slot[p.ix(l, b)]);
      p.slot[p.ix(l, b)] = -1;
    }
    p.set(l, b, to, m.toBits);
  }
}
