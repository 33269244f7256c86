/**
 * The quality meter's quantization error of a layer whose blocks are all attended: its sums over the
 * listed blocks leave out the error of blocks at 16 bits (0), and are checked here against the sums
 * written out from scratch (every listed block added in order, then the unlisted ones per precision)
 * over random rows, masses of 0, NaN and infinities among them.
 */
import { describe, expect, it } from 'vitest';
import { makeRng } from '../../hil/rng.js';
import type { Observation } from '../../policies/policy.js';
import { BITS, KVCache } from '../../sim/kv-cache.js';
import { defaultErrorTable } from '../../sim/quality/error-table.js';
import { QualityMeter } from '../../sim/quality/quality-meter.js';
import type { LayerAttention, TraceHeader } from '../../traces/format.js';
import { tinyModel } from '../helpers/tiny.js';

const tiers = [
  { name: 'hbm', capacityBytes: 1e9 },
  { name: 'dram', capacityBytes: 1e9 },
  { name: 'nvme', capacityBytes: 1e9 },
];
const header = { layers: 1, provenance: {} } as unknown as TraceHeader;

/** one row's Σ p·e / Σ p as the definition reads: listed blocks in row order, then the unlisted ones by precision */
function reference(cache: KVCache, la: LayerAttention): number {
  const table = defaultErrorTable();
  const e = (bits: number) => table.relError(bits, cache.groupSize, false);
  const idx = la.idx!;
  const listedAt = new Map<number, number>();
  let tot = 0;
  let err = 0;
  for (let i = 0; i < idx.length; i++) {
    const bits = cache.bitsOf(0, idx[i]);
    tot += la.mass[i];
    err += la.mass[i] * e(bits);
    listedAt.set(bits, (listedAt.get(bits) ?? 0) + 1);
  }
  const unlisted = la.nBlocks - idx.length;
  const u = unlisted > 0 ? la.remainder / unlisted : 0;
  if (u > 0) {
    for (const bits of BITS) {
      const n = cache.countBits(0, bits) - (listedAt.get(bits) ?? 0);
      tot += u * n;
      err += u * n * e(bits);
    }
  }
  return tot > 0 ? err / tot : 0;
}

describe('quality meter, listed sums', () => {
  it('equals the sums written out from scratch over random rows (16-bit blocks skipped, non-finite masses summed again)', () => {
    const special = [0, -0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 2 ** -140];
    let nonFinite = 0;
    let compared = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const r = makeRng(seed).next;
      const n = 20 + Math.floor(r() * 40);
      const cache = new KVCache(tinyModel, 4, 1, 64, tiers);
      const share16 = r();
      for (let b = 0; b < n; b++) {
        const bits = r() < share16 ? 16 : [8, 4, 3, 2][Math.floor(r() * 4)];
        cache.create(0, bits === 16 ? 0 : 1 + Math.floor(r() * 2), bits);
      }
      if (cache.countBits(0, 16) === n) cache.move(0, 0, 1, 4);
      const meter = new QualityMeter(header, cache, {});
      const obs = { layer: 0, step: 0, nBlocks: n, attended: new Uint8Array(n).fill(1), attendedCount: n } as unknown as Observation;
      for (let step = 0; step < 6; step++) {
        const rows: LayerAttention[] = [];
        for (let g = 0; g < 2; g++) {
          const k = Math.floor(r() * n);
          const ids = [...new Set(Array.from({ length: k }, () => Math.floor(r() * n)))];
          if (r() < 0.5) ids.sort((a, b) => a - b);
          const mass = Float32Array.from(ids, () => (r() < 0.05 ? special[Math.floor(r() * special.length)] : r() * 0.1));
          if (mass.some((m) => !Number.isFinite(m))) nonFinite++;
          rows.push({ nBlocks: n, idx: Uint32Array.from(ids), mass, remainder: r() < 0.2 ? 0 : r(), normFrom: 0, norms: new Float32Array(0) });
        }
        meter.layer(step, 0, obs, rows);
        const got = meter.endStep().quant_error;
        const want = (reference(cache, rows[0]) + reference(cache, rows[1])) / 2;
        expect(Object.is(got, want)).toBe(true);
        compared++;
        // some blocks change precision between steps
        const b = Math.floor(r() * n);
        cache.move(0, b, 1 + Math.floor(r() * 2), [8, 4, 2][Math.floor(r() * 3)]);
      }
    }
    expect(compared).toBe(360);
    expect(nonFinite).toBeGreaterThan(10);
  });
});
