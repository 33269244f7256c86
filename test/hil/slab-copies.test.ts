// The 2 MiB slab benchmark (target: >= 95% of the best pinned bandwidth): three ways of issuing a
// slab list, both directions, each checked byte for byte inside the benchmark; the TARGET line
// names its method.
import { describe, expect, it } from 'vitest';
import { openBackend } from '../../hil/backend.js';
import { type CopyRow, SLAB_METHODS, benchSlabCopies, formatSlabTarget, slabTargets } from '../../hil/bench/copy-bench.js';
import { backendAvailability } from './availability.js';

const host = backendAvailability('host');

describe.skipIf(!host.available)(`slab copies, host backend${host.available ? '' : ` (skipped: ${host.reason})`}`, () => {
  it('measures one stream, two streams and one batch call in both directions', async () => {
    const b = openBackend('host');
    try {
      const rows = await benchSlabCopies(b, { slabBytes: 256 << 10, slabs: 5, trials: 2 });
      expect(rows.map((r) => `${r.method}/${r.direction}`)).toEqual(SLAB_METHODS.flatMap((m) => [`${m}/h2d`, `${m}/d2h`]));
      for (const r of rows) {
        expect(r.us).toBeGreaterThan(0);
        expect(r.GBps).toBeCloseTo((5 * (256 << 10)) / (r.us * 1e3), 9);
      }
    } finally {
      b.close();
    }
  });

});

describe('slab targets', () => {
  it('rates every method against the best pinned bandwidth of its direction', () => {
    const pin = (direction: 'h2d' | 'd2h', bytes: number, GBps: number): CopyRow => ({ direction, hostKind: 'pinned', bytes, usPerCopy: 1, GBps });
    const rows = [pin('h2d', 2 << 20, 51.2), pin('h2d', 256 << 20, 54.9), pin('d2h', 2 << 20, 53.2), pin('d2h', 64 << 20, 55.1), { ...pin('h2d', 256 << 20, 99), hostKind: 'pageable' as const }];
    const slabs = SLAB_METHODS.map((method) => ({ method, direction: 'h2d' as const, slabBytes: 2 << 20, slabs: 64, us: 1, GBps: 53 }));
    const t = slabTargets(rows, slabs);
    expect(t.map((x) => `${x.direction} ${x.method} ${x.bestPinnedGBps}`)).toEqual([
      'h2d one stream, same slab repeated 54.9', 'h2d one stream 54.9', 'h2d two streams 54.9', 'h2d batch 54.9', 'd2h one stream, same slab repeated 55.1',
    ]);
    expect(t[0].percent).toBeCloseTo((100 * 51.2) / 54.9, 9);
  });

  it('prints the target line with its method', () => {
    expect(formatSlabTarget({ direction: 'h2d', method: 'two streams', GBps: 53.1, bestPinnedGBps: 54.9, percent: 96.72 })).toBe(
      'TARGET h2d 2 MiB slab (two streams) = 96.7% of best pinned 54.9 GB/s: 53.10 GB/s (target >= 95%)',
    );
  });
});
