// A copy on the memory stream hidden under attention on the compute stream.
// masking efficiency = 1 - stall / transfer, stall = (time of both) - (time of compute alone).
import type { NativeBackend } from '../addon-types.js';
import { buildDeviceCache } from './device-cache.js';
import { median } from './timing.js';

export interface OverlapRow {
  computeMs: number;
  copyMs: number;
  bothMs: number;
  computeWhileCopyingMs: number;
  copyBytes: number;
  maskingEfficiency: number;
}

export async function benchOverlap(b: NativeBackend, opts: { contextTokens: number; attnRepeat: number; slabBytes: number; slabs: number }, trials = 5): Promise<OverlapRow> {
  const g = { kvHeads: 8, blockTokens: 16, headDim: 128, groupSize: 128 };
  const blocks = Math.ceil(opts.contextTokens / 16);
  const cache = buildDeviceCache(b, g, Array.from({ length: blocks }, () => 'fp16' as const));
  const q = b.alloc('device', 32 * 128 * 4);
  const out = b.alloc('device', 32 * 128 * 4);
  b.write(q, 0, new Float32Array(32 * 128).fill(0.01));
  const host = b.alloc('pinned', opts.slabBytes * opts.slabs);
  const dev = b.alloc('device', opts.slabBytes * opts.slabs);
  const [s, eA, eB] = [b.createEvent(), b.createEvent(), b.createEvent()];
  const attn = () =>
    b.attention('compute', { arena: cache.arena, table: cache.table, q, out, qHeads: 32, kvHeads: 8, contextTokens: opts.contextTokens }, opts.attnRepeat);
  const copies = () => {
    for (let i = 0; i < opts.slabs; i++) b.copy('memory', dev, i * opts.slabBytes, host, i * opts.slabBytes, opts.slabBytes);
  };
  const run = async (withAttn: boolean, withCopy: boolean) => {
    b.record('compute', s);
    b.waitEvent('memory', s);
    if (withAttn) attn();
    if (withCopy) copies();
    b.record('compute', eA);
    b.record('memory', eB);
    await b.synchronize();
    return { a: b.elapsedMs(s, eA), c: b.elapsedMs(s, eB) };
  };
  try {
    await run(true, true); // warm-up
    const compute: number[] = [], copy: number[] = [], both: number[] = [], computeBoth: number[] = [];
    for (let t = 0; t < trials; t++) {
      compute.push((await run(true, false)).a);
      copy.push((await run(false, true)).c);
      const r = await run(true, true);
      both.push(Math.max(r.a, r.c));
      computeBoth.push(r.a);
    }
    const computeMs = median(compute), copyMs = median(copy), bothMs = median(both);
    const stall = Math.max(0, bothMs - computeMs);
    return { computeMs, copyMs, bothMs, computeWhileCopyingMs: median(computeBoth), copyBytes: opts.slabBytes * opts.slabs, maskingEfficiency: Math.max(0, Math.min(1, 1 - stall / copyMs)) };
  } finally {
    for (const e of [s, eA, eB]) b.destroyEvent(e);
    for (const r of [q, out, host, dev]) b.free(r);
    cache.free();
  }
}
