/** A planned move, by direction: within HBM (requantize), into HBM (promote), out of HBM (demote), or between host tiers (same bits only). */
import { lowerDemote } from './lower-demote.js';
import { lowerPromote } from './lower-promote.js';
import { lowerRequant } from './lower-requant.js';
import type { LoweringContext } from './lowering-context.js';
import type { PlannedMove } from './plan.js';

export function lowerMove(c: LoweringContext, m: PlannedMove): void {
  const from = m.fromTier;
  const to = m.toTier;
  if (from === 0 && to === 0) return lowerRequant(c, m);
  if (to === 0) return lowerPromote(c, m);
  if (from === 0) return lowerDemote(c, m);
  lowerHostMove(c, m);
}

/** between host tiers: NVMe reads into DRAM bounce slots, a copy where the regions differ, NVMe writes from DRAM slots */
function lowerHostMove(c: LoweringContext, m: PlannedMove): void {
  const { layer: l, fromTier: from, toTier: to } = m;
  const { host, out } = c;
  if (m.fromBits !== m.toBits) throw new Error(`hil: requantizing between host tiers (${host.names[from]} -> ${host.names[to]}) is not supported`);
  const fromRegion = host.region(from);
  const toRegion = host.region(to);
  const nFrom = host.isNvme(from);
  const nTo = host.isNvme(to);
  const sizes = m.blocks.map(() => out.bb(m.fromBits));
  if (nFrom) out.file('fileRead', m.blocks.map((b, i) => [host.offset(l, b), sizes[i]]));
  if (nFrom) out.count(host.nvmeKeys('read'), sizes.reduce((a, b) => a + b, 0));
  if (fromRegion !== toRegion) {
    const keys = host.hostKeys(from, to);
    out.copies(`${m.reason} ${host.names[from]}->${host.names[to]}`, fromRegion, toRegion, m.blocks.map((b, i) => [host.offset(l, b), host.offset(l, b), sizes[i]]), keys);
  }
  if (nTo) {
    out.file('fileWrite', m.blocks.map((b, i) => [host.offset(l, b), sizes[i]]));
    out.count(host.nvmeKeys('write'), sizes.reduce((a, b) => a + b, 0));
  }
  for (const b of m.blocks) c.places.set(l, b, to, m.toBits);
}
