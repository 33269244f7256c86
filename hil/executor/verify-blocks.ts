/** After a run: every live block's bytes where the plan says it ended (arena slot, host slot, or the file read back through its DRAM slot) against what it must hold. */
import type { NativeBackend, NativeFileTier } from '../addon-types.js';
import type { BlockData } from './block-data.js';
import { expectedBlock } from './expected-block.js';
import type { LoweredPlan, RegionName } from './lowered-plan.js';

export interface VerifyResult {
  checked: number;
  mismatches: number;
  firstMismatch?: string;
}

export async function verifyBlocks(b: NativeBackend, p: LoweredPlan, data: BlockData, regions: Map<RegionName, number>, file?: NativeFileTier): Promise<VerifyResult> {
  const { tier, bits, slot } = p.final;
  let checked = 0;
  let mismatches = 0;
  let firstMismatch: string | undefined;
  const maxBlocks = p.maxBlocks;
  for (let i = 0; i < tier.length; i++) {
    const t = tier[i];
    if (t < 0) continue;
    const l = Math.floor(i / maxBlocks);
    const blk = i % maxBlocks;
    const want = expectedBlock(p, data, l, blk, bits[i], p.final.via.get(i));
    let got: Uint8Array;
    if (t === 0) got = b.read(regions.get('arena')!, slot[i], want.length);
    else {
      const region = p.hostRegionOf[t] ?? 'dram';
      const off = i * p.slotBytes;
      if (p.fileTiers.includes(t)) await file!.read(regions.get('dram')!, off, off, Math.ceil(want.length / 4096) * 4096);
      got = b.read(regions.get(region)!, off, want.length);
    }
    checked++;
    if (!Buffer.from(got).equals(Buffer.from(want))) {
      mismatches++;
      firstMismatch ??= `layer ${l} block ${blk} (tier ${t}, ${bits[i]} bits)`;
    }
  }
  return { checked, mismatches, firstMismatch };
}
