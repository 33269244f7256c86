// The host issue probe: warm lists untimed, then the median of the timed lists' us per copy; every
// copy goes from a pinned slot into the same offset of HBM; what it allocated is freed on failure.
import { describe, expect, it } from 'vitest';
import type { NativeBackend } from '../../hil/addon-types.js';
import { LIST_COPIES, PROBE_COPY_BYTES, probeHostIssue } from '../../hil/timing/host-issue-probe.js';

/** a backend that records its copies and allocations, and fails where told */
function fake(failAt?: 'device' | 'copy') {
  const live = new Set<string>();
  const copies: [number, number, number, number, number][] = [];
  let syncs = 0;
  const b = {
    alloc: (kind: string, bytes: number) => {
      if (failAt === 'device' && kind === 'device') throw new Error('out of memory');
      live.add(kind);
      expect(bytes).toBe(LIST_COPIES * PROBE_COPY_BYTES);
      return kind === 'pinned' ? 1 : 2;
    },
    free: (x: number) => live.delete(x === 1 ? 'pinned' : 'device'),
    copy: (stream: string, dst: number, dstOff: number, src: number, srcOff: number, bytes: number) => {
      if (failAt === 'copy') throw new Error('copy failed');
      expect(stream).toBe('memory');
      copies.push([dst, dstOff, src, srcOff, bytes]);
    },
    synchronize: async () => {
      syncs++;
    },
  } as unknown as NativeBackend;
  return { b, live, copies, syncs: () => syncs };
}

describe('host issue probe', () => {
  it('issues 8 warm and 15 timed lists of single copies into the same offsets, and reports the median of the timed ones', async () => {
    const f = fake();
    const r = await probeHostIssue(f.b);
    expect(f.copies).toHaveLength(23 * LIST_COPIES);
    expect(f.copies.slice(0, 3)).toEqual([0, 1, 2].map((i) => [2, i * PROBE_COPY_BYTES, 1, i * PROBE_COPY_BYTES, PROBE_COPY_BYTES]));
    expect(f.syncs()).toBe(24); // after each list, and once before freeing
    expect(r.lists_us).toHaveLength(15);
    const s = [...r.lists_us].sort((a, b) => a - b);
    expect(r.copy_us).toBe(s[7]);
    expect([...f.live]).toEqual([]);
  });

  it('frees what it allocated when an allocation or a copy fails', async () => {
    for (const at of ['device', 'copy'] as const) {
      const f = fake(at);
      await expect(probeHostIssue(f.b)).rejects.toThrow(at === 'device' ? 'out of memory' : 'copy failed');
      expect([...f.live]).toEqual([]);
    }
  });
});
