import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  fitLinkLeastSquares,
  fitLinkMinimax,
  linkTimeUs,
  maxRelError,
  type CopyPoint,
} from '../../sim/hardware/fit-link.js';
import { resolveMachine } from '../../sim/hardware/load-profile.js';

const REFERENCE = fileURLToPath(
  new URL('../../sim/hardware/reference/h100-pcie5-reference-2026-11-22.json', import.meta.url),
);
const SHARED = fileURLToPath(
  new URL('../../../shared/data/hardware/h100-pcie5-reference-2026-11-22.json', import.meta.url),
);

interface Reference {
  curves: Record<string, { bytes: number; ms: number }[]>;
}
const reference = JSON.parse(readFileSync(REFERENCE, 'utf8')) as Reference;

function curve(name: string, minBytes: number): CopyPoint[] {
  return reference.curves[name]!.filter((p) => p.bytes >= minBytes).map((p) => ({ bytes: p.bytes, us: p.ms * 1000 }));
}

describe('linkTimeUs', () => {
  it('is alpha + bytes / beta with GBps = 1e3 bytes per microsecond', () => {
    // 1 MB at 50 GB/s = 20 us, plus 3 us
    expect(linkTimeUs({ alpha_us: 3, GBps: 50 }, 1e6)).toBeCloseTo(23, 12);
  });
});

describe('link fits', () => {
  it('recover alpha and beta exactly from points on a line', () => {
    // (1000 B, 3 us) and (2000 B, 4 us): 1 us per 1000 B = 1 GB/s, alpha = 2 us
    const two = [{ bytes: 1000, us: 3 }, { bytes: 2000, us: 4 }];
    for (const fit of [fitLinkLeastSquares(two), fitLinkLeastSquares(two, false), fitLinkMinimax(two)]) {
      expect(fit.alpha_us).toBeCloseTo(2, 6);
      expect(fit.GBps).toBeCloseTo(1, 6);
      expect(fit.maxRelError).toBeLessThan(1e-6);
    }
    const line = [4096, 65536, 1 << 20, 1 << 30].map((bytes) => ({ bytes, us: 5 + bytes / 55e3 }));
    const ls = fitLinkLeastSquares(line);
    const mm = fitLinkMinimax(line);
    expect(ls.alpha_us).toBeCloseTo(5, 6);
    expect(ls.GBps).toBeCloseTo(55, 6);
    expect(mm.alpha_us).toBeCloseTo(5, 4);
    expect(mm.GBps).toBeCloseTo(55, 4);
  });

  it('minimax has the smallest worst-case error, and no other line beats it', () => {
    const pts = curve('h2d_pinned', 64 * 1024);
    const mm = fitLinkMinimax(pts);
    const ls = fitLinkLeastSquares(pts);
    expect(mm.maxRelError).toBeLessThan(ls.maxRelError);
    for (const [da, db] of [[0.05, 0], [-0.05, 0], [0, 0.05], [0, -0.05], [0.05, 0.05], [-0.05, -0.05]]) {
      const nudged = { alpha_us: mm.alpha_us + da!, GBps: mm.GBps + db! };
      expect(maxRelError(nudged, pts)).toBeGreaterThan(mm.maxRelError);
    }
  });

  it('refuses too few points or non-positive values', () => {
    expect(() => fitLinkMinimax([{ bytes: 1, us: 1 }])).toThrowError('need at least 2 copy points (got 1)');
    expect(() => fitLinkLeastSquares([{ bytes: 1, us: 1 }, { bytes: 1, us: 2 }])).toThrowError('2 distinct sizes');
    expect(() => fitLinkLeastSquares([{ bytes: 1, us: 0 }, { bytes: 2, us: 2 }])).toThrowError('must be > 0');
  });
});

describe('h100-pcie5 host link from the reference measurement', () => {
  const pcie = resolveMachine('h100-pcie5').links[0]!;

  it('is the minimax fit of the pinned curves >= 64 KiB, rounded to 0.01', () => {
    const h2d = fitLinkMinimax(curve('h2d_pinned', 64 * 1024));
    const d2h = fitLinkMinimax(curve('d2h_pinned', 64 * 1024));
    expect(pcie.b_to_a.alpha_us).toBeCloseTo(h2d.alpha_us, 2);
    expect(pcie.b_to_a.GBps).toBeCloseTo(h2d.GBps, 2);
    expect(pcie.a_to_b.alpha_us).toBeCloseTo(d2h.alpha_us, 2);
    expect(pcie.a_to_b.GBps).toBeCloseTo(d2h.GBps, 2);
  });

  it('reproduces every measured pinned copy >= 1 MiB within 5% (and >= 64 KiB too)', () => {
    for (const [name, dir] of [['h2d_pinned', pcie.b_to_a], ['d2h_pinned', pcie.a_to_b]] as const) {
      const points = curve(name, 1 << 20);
      expect(points).toHaveLength(6);
      for (const p of points) {
        expect(Math.abs(linkTimeUs(dir, p.bytes) / p.us - 1), `${name} ${p.bytes} B`).toBeLessThan(0.05);
      }
      expect(maxRelError(dir, curve(name, 64 * 1024))).toBeLessThan(0.05);
    }
  });

  // shared/ sits beside the project in development and CI; the product itself never reads it
  it.skipIf(!existsSync(SHARED))('keeps the raw reference file identical to the shared one it was copied from', () => {
    expect(readFileSync(REFERENCE, 'utf8')).toBe(readFileSync(SHARED, 'utf8'));
  });
});
