/**
 * Quantization error table: the relative RMS error of a block's dequantized K/V at a precision,
 * keyed by (bits, group size, rotation). It is the block's contribution to the relative error of the
 * attention output: out = Σ_j p_j v_j, so a block holding attention mass p_j with relative error e_j
 * adds about p_j·e_j (see quality-meter.ts).
 *
 * The model (each entry says so in its `source`):
 * - uniform asymmetric group quantization, q = round((x − min)/(max − min)·(2^b − 1)) (KIVI,
 *   FlexGen, SynapseVM), has a step Δ = range/(2^b − 1) and a noise RMS of Δ/√12 (Widrow & Kollár,
 *   Quantization Noise, 2008, ch. 4);
 * - the range of a group of G values is the expected range of G standard normals, E[R_G]·σ (Tippett,
 *   Biometrika 1925: the d2 constant, computed here by numeric integration: 4.12 at G = 32, 4.65 at
 *   64, 5.16 at 128);
 * - without rotation, KV activations have outlier channels (KIVI, Liu et al. ICML 2024, Fig. 2;
 *   KVQuant, Hooper et al. NeurIPS 2024, §3) that widen a group's range: we take a factor 2 on the
 *   range (an assumption, the only free number here); a Walsh–Hadamard rotation spreads outliers
 *   over the group so the values are close to Gaussian (QuaRot, Ashkboos et al. NeurIPS 2024;
 *   RotateKV, Su et al. 2025): factor 1.
 * The hardware-in-the-loop layer measured these errors on real kernels: `defaultErrorTable()` uses
 * those measurements (sim/quality/measured-table.ts) and keeps the model where nothing was measured.
 */
import { measuredEntries } from './measured-table.js';

export interface QuantErrorEntry {
  bits: number;
  group: number;
  rotation: boolean;
  /** relative RMS error of a dequantized value (error RMS / value RMS) */
  rel_error: number;
  source: string;
}

/** factor on a group's range without rotation (outlier channels); 1 with a Hadamard rotation */
export const OUTLIER_RANGE_FACTOR = 2;
export const TABLE_BITS = [8, 4, 3, 2] as const;
export const TABLE_GROUPS = [32, 64, 128] as const;

/** Standard normal CDF (Abramowitz & Stegun 7.1.26 erf, |error| < 1.5e-7). */
function phi(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-z * z);
  return x >= 0 ? 0.5 * (1 + y) : 0.5 * (1 - y);
}

/** Expected range of n standard normal samples: ∫ 1 − Φ(x)^n − (1 − Φ(x))^n dx (trapezoid, step 1e-3). */
const rangeOf = new Map<number, number>();
export function expectedNormalRange(n: number): number {
  const known = rangeOf.get(n);
  if (known !== undefined) return known;
  let s = 0;
  const h = 1e-3;
  for (let x = -10; x <= 10; x += h) {
    const p = phi(x);
    s += (1 - p ** n - (1 - p) ** n) * h;
  }
  rangeOf.set(n, s);
  return s;
}

export function modelRelError(bits: number, group: number, rotation: boolean): number {
  if (bits >= 16) return 0;
  const range = (rotation ? 1 : OUTLIER_RANGE_FACTOR) * expectedNormalRange(group);
  return range / ((2 ** bits - 1) * Math.sqrt(12));
}

function buildDefault(): QuantErrorEntry[] {
  const out: QuantErrorEntry[] = [];
  for (const bits of TABLE_BITS) {
    for (const group of TABLE_GROUPS) {
      for (const rotation of [false, true]) {
        out.push({
          bits,
          group,
          rotation,
          rel_error: modelRelError(bits, group, rotation),
          source: `model: Δ/√12 noise (Widrow & Kollár 2008) on E[range of ${group} normals] (Tippett 1925)${rotation ? ', Hadamard-rotated (QuaRot/RotateKV)' : `, x${OUTLIER_RANGE_FACTOR} outlier range (KIVI/KVQuant)`}`,
        });
      }
    }
  }
  return out;
}

export class QuantErrorTable {
  private readonly map = new Map<string, QuantErrorEntry>();
  constructor(readonly entries: QuantErrorEntry[]) {
    for (const e of entries) this.map.set(key(e.bits, e.group, e.rotation), e);
  }

  /** Relative error at (bits, group, rotation); 0 at 16 bits. Throws for a missing entry. */
  relError(bits: number, group: number, rotation: boolean): number {
    if (bits >= 16) return 0;
    const e = this.map.get(key(bits, group, rotation));
    if (!e) throw new Error(`quant error table: no entry for ${bits} bits, group ${group}, rotation ${rotation} (groups: ${TABLE_GROUPS.join(', ')}; bits: ${TABLE_BITS.join(', ')})`);
    return e.rel_error;
  }

  /** A copy with measured entries replacing the model's (the HIL layer's calibration). */
  withMeasured(measured: QuantErrorEntry[]): QuantErrorTable {
    const m = new Map(this.map);
    for (const e of measured) m.set(key(e.bits, e.group, e.rotation), e);
    return new QuantErrorTable([...m.values()]);
  }
}

function key(bits: number, group: number, rotation: boolean): string {
  return `${bits}|${group}|${rotation ? 1 : 0}`;
}

/** The model alone (every entry from the formula). */
export function modelErrorTable(): QuantErrorTable {
  return new QuantErrorTable(buildDefault());
}

let defaultTable: QuantErrorTable | undefined;
/** The table runs use: H100 measurements where they exist (sim/quality/measured-table.ts), the model elsewhere. */
export function defaultErrorTable(): QuantErrorTable {
  defaultTable ??= modelErrorTable().withMeasured(measuredEntries());
  return defaultTable;
}
