/**
 * A planned move, by direction: within HBM (requantize), into HBM (promote), out of HBM (demote), or
 * between host tiers (a copy; where the bits change, a conversion on the host).
 */
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

/** between host tiers: file reads (NVMe, HDD) into DRAM bounce slots, a copy where the regions differ, file writes from DRAM slots */
function lowerHostMove(c: LoweringContext, m: PlannedMove): void {
  const { layer: l, fromTier: from, toTier: to } = m;
  const { host, out } = c;
  if (m.fromBits !== m.toBits) return lowerHostRequant(c, m);
  const fromRegion = host.region(from);
  const toRegion = host.region(to);
  const nFrom = host.isFile(from);
  const nTo = host.isFile(to);
  const sizes = m.blocks.map(() => out.bb(m.fromBits));
  if (nFrom) out.file('fileRead', m.blocks.map((b, i) => [host.offset(l, b), sizes[i]]));
  if (nFrom) out.count(host.fileKeys(from, 'read'), sizes.reduce((a, b) => a + b, 0));
  if (fromRegion !== toRegion) {
    const keys = host.hostKeys(from, to);
    out.copies(`${m.reason} ${host.names[from]}->${host.names[to]}`, fromRegion, toRegion, m.blocks.map((b, i) => [host.offset(l, b), host.offset(l, b), sizes[i]]), keys);
  }
  if (nTo) {
    out.file('fileWrite', m.blocks.map((b, i) => [host.offset(l, b), sizes[i]]));
    out.count(host.fileKeys(to, 'write'), sizes.reduce((a, b) => a + b, 0));
  }
  for (const b of m.blocks) c.places.set(l, b, to, m.toBits);
}

/**
 * between host tiers at other bits: NVMe (and HDD) blocks are read into their DRAM bounce slots; per
 * block the host converts it from its source slot into its destination slot (host-convert.ts); file
 * writes follow. Nothing crosses the host link, as in the simulator.
 */
function lowerHostRequant(c: LoweringContext, m: PlannedMove): void {
  const { layer: l, fromTier: from, toTier: to } = m;
  const { host, out } = c;
  const fromRegion = host.region(from);
  const toRegion = host.region(to);
  const sizeFrom = out.bb(m.fromBits);
  const sizeTo = out.bb(m.toBits);
  const n = m.blocks.length;
  if (host.isFile(from)) {
    out.file('fileRead', m.blocks.map((b) => [host.offset(l, b), sizeFrom]));
    out.count(host.fileKeys(from, 'read'), sizeFrom * n);
  }
  for (const b of m.blocks) out.push({ o: 'hostConvert', src: fromRegion, srcOff: host.offset(l, b), fromBits: m.fromBits, dst: toRegion, dstOff: host.offset(l, b), toBits: m.toBits });
  if (host.isFile(to)) {
    out.file('fileWrite', m.blocks.map((b) => [host.offset(l, b), sizeTo]));
    out.count(host.fileKeys(to, 'write'), sizeTo * n);
  }
  for (const b of m.blocks) c.places.set(l, b, to, m.toBits);
}
