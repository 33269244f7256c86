/**
 * The host's time to convert one block between widths as the executor does for a move between host
 * tiers or within one (executor/host-convert.ts: dequantized to FP16 and quantized again with the
 * reference quantizer, on the host's CPU): per pair of widths, blocks of the model's geometry
 * converted back to back, the median over trials of the time per block. The GPU takes no part.
 * Not timed: the executor's read of the block from its slot, its write into the destination and its
 * wait for the memory stream (the simulator prices that wait itself). The pairs are INT to INT, as a
 * re-bucketing makes them; a conversion with an FP16 end does one of the two halves.
 */
import { packBlock } from '../block-pack.js';
import { convertBlock } from '../executor/host-convert.js';
import { toHalfArray } from '../half.js';
import { type BlockGeometry, PRECISION_OF_BITS, sectionElems } from '../kv-format.js';
import { median } from '../timing/median.js';

export interface HostConvertPoint {
  from_bits: number;
  to_bits: number;
  blocks: number;
  /** host us per block: the median over trials */
  us: number;
  trials_us: number[];
}

export interface HostConvertOptions {
  geometry: BlockGeometry;
  /** pairs of widths (default INT8 -> INT4, INT8 -> INT2, INT4 -> INT2) */
  pairs?: [number, number][];
  /** blocks per trial (default 16) */
  blocks?: number;
  /** timed trials per pair, after one untimed (default 5) */
  trials?: number;
  /** the host clock in ms (performance.now; tests script it) */
  now?: () => number;
}

export function benchHostConvert(o: HostConvertOptions): HostConvertPoint[] {
  const pairs = o.pairs ?? [
    [8, 4],
    [8, 2],
    [4, 2],
  ];
  const blocks = o.blocks ?? 16;
  const trials = o.trials ?? 5;
  if (!(Number.isInteger(blocks) && blocks >= 1)) throw new Error(`host convert bench: blocks must be an integer >= 1 (got ${blocks})`);
  if (!(Number.isInteger(trials) && trials >= 1)) throw new Error(`host convert bench: trials must be an integer >= 1 (got ${trials})`);
  for (const [a, b] of pairs) {
    if (PRECISION_OF_BITS[a] === undefined || PRECISION_OF_BITS[b] === undefined) throw new Error(`host convert bench: widths ${a} -> ${b}: each must be one of ${Object.keys(PRECISION_OF_BITS).join(', ')}`);
  }
  const now = o.now ?? (() => performance.now());
  const n = sectionElems(o.geometry);
  // FP16 values of a smooth pattern (finite scales at every width)
  const k = toHalfArray(Array.from({ length: n }, (_, i) => 0.5 + 0.25 * Math.sin(i * 0.37)));
  const v = toHalfArray(Array.from({ length: n }, (_, i) => 0.5 + 0.25 * Math.cos(i * 0.23)));
  return pairs.map(([from, to]) => {
    const src = packBlock(o.geometry, PRECISION_OF_BITS[from]!, k, v);
    const each: number[] = [];
    for (let t = 0; t <= trials; t++) {
      const t0 = now();
      for (let i = 0; i < blocks; i++) convertBlock(o.geometry, from, to, src);
      const us = ((now() - t0) * 1000) / blocks;
      if (t > 0) each.push(us);
    }
    return { from_bits: from, to_bits: to, blocks, us: median(each), trials_us: each };
  });
}
