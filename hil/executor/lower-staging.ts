/**
 * Copies of offloaded blocks into one staging-ring extent (their current bits, block after block):
 * a prefetch stages them for the layer's next attention, a fetch brings what that attention reads
 * and nothing staged. NVMe blocks are read into their DRAM bounce slots first.
 */
import { align } from './copy-runs.js';
import { MEMORY } from './fences.js';
import type { LoweringContext } from './lowering-context.js';
import type { PlannedStage } from './plan.js';

/** copy offloaded blocks (their current bits) from one host tier into one ring extent */
export function toStaging(c: LoweringContext, l: number, from: number, blocks: number[], bits: number[], reason: string): { offset: number; offsets: number[] } {
  const { host, out } = c;
  const sizes = bits.map((x) => out.bb(x));
  const total = sizes.reduce((a, b) => a + b, 0);
  const ext = c.ring.alloc(align(total, 256));
  c.touch(MEMORY, ext.acc);
  c.fences.after(MEMORY, ext.acc);
  const region = host.region(from);
  if (host.isFile(from)) {
    out.file('fileRead', blocks.map((b, i) => [host.offset(l, b), sizes[i]]));
    out.count(host.fileKeys(from, 'read'), total);
  }
  const offsets: number[] = [];
  let at = ext.offset;
  const list: [number, number, number][] = blocks.map((b, i) => {
    offsets.push(at);
    const item: [number, number, number] = [host.offset(l, b), at, sizes[i]];
    at += sizes[i];
    return item;
  });
  out.copies(`${reason} ${host.names[from]}->${host.names[0]}`, region, 'arena', list, host.pcieKeys(from, true));
  c.extAcc.set(ext.offset, ext.acc);
  return { offset: ext.offset, offsets };
}

export function lowerStage(c: LoweringContext, s: PlannedStage): void {
  const { offset, offsets } = toStaging(c, s.layer, s.fromTier, s.blocks, s.bits, 'prefetch');
  c.stagedExtents[s.layer].push(offset);
  s.blocks.forEach((b, i) => c.staged[s.layer].set(b, { offset: offsets[i], tier: s.fromTier, bits: s.bits[i] }));
}
