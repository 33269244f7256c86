// Quality of quantized KV on real numbers: the attention output computed over quantized KV
// vs over FP16 KV, per (bits, group size, rotation), and per mixed-precision policy.
// Data: Gaussian keys with a few outlier channels (as real keys have), Gaussian values;
// optionally attention concentrated on sink tokens and a recent window, as real attention is.
import type { NativeBackend } from './addon-types.js';
import { attentionOn } from './array-ops.js';
import { packCache } from './block-pack.js';
import { floatToHalf, halfToFloat } from './half.js';
import { type Precision, bitsPerElement } from './kv-format.js';
import { hadamardRef } from './reference/hadamard.js';
import { dequantizeRef, quantizeRef } from './reference/quantize.js';
import { makeRng } from './rng.js';

export interface QualitySetting {
  bits: 2 | 3 | 4 | 8;
  groupSize: number;
  rotation: boolean;
}

export interface QualityPolicy {
  label: string;
  precisionOf: (block: number, blocks: number) => Precision;
}

export interface QualityOptions {
  contextTokens: number;
  qHeads: number;
  kvHeads: number;
  headDim: number;
  blockTokens: number;
  seed: number;
  outlierChannels: number;
  outlierScale: number;
  /** Concentrate attention on the first 4 tokens and the last `recentTokens`. */
  concentrated: boolean;
  recentTokens: number;
  settings: QualitySetting[];
  policies: QualityPolicy[];
  policyGroupSize: number;
}

export interface QualityRow extends QualitySetting {
  outputRmse: number;
  outputRelL2: number;
  kvRmse: number;
}

export interface PolicyRow {
  label: string;
  avgBits: number;
  outputRmse: number;
  outputRelL2: number;
}

export interface QualityResult {
  rows: QualityRow[];
  policies: PolicyRow[];
}

function errors(out: ArrayLike<number>, ref: ArrayLike<number>): { rmse: number; rel: number } {
  let se = 0;
  let ss = 0;
  for (let i = 0; i < ref.length; i++) {
    se += (out[i]! - ref[i]!) ** 2;
    ss += ref[i]! ** 2;
  }
  return { rmse: Math.sqrt(se / ref.length), rel: Math.sqrt(se / Math.max(ss, 1e-300)) };
}

const rotateHalves = (x: Uint16Array, n: number): Uint16Array =>
  Uint16Array.from(hadamardRef(Array.from(x, halfToFloat), x.length / n, n), floatToHalf);

export function qualityInputs(o: QualityOptions): { k: Uint16Array; v: Uint16Array; q: Float32Array } {
  const rng = makeRng(o.seed);
  const D = o.headDim;
  const L = o.contextTokens;
  const outliers = new Set<number>();
  while (outliers.size < o.outlierChannels) outliers.add(rng.int(0, D - 1));
  const q = new Float32Array(o.qHeads * D).map(() => rng.normal());
  const k = new Uint16Array(o.kvHeads * L * D);
  const v = new Uint16Array(o.kvHeads * L * D);
  const group = o.qHeads / o.kvHeads;
  for (let h = 0; h < o.kvHeads; h++) {
    // direction of this kv head's queries: keys along it receive the attention
    const dir = new Float64Array(D);
    for (let j = 0; j < group; j++) for (let d = 0; d < D; d++) dir[d]! += q[(h * group + j) * D + d]!;
    const norm = Math.hypot(...dir);
    for (let t = 0; t < L; t++) {
      const boost = o.concentrated && (t < 4 || t >= L - o.recentTokens) ? (t < 4 ? 6 : 3) : 0;
      for (let d = 0; d < D; d++) {
        const base = rng.normal() * (outliers.has(d) ? o.outlierScale : 1);
        k[(h * L + t) * D + d] = floatToHalf(base + (boost * Math.sqrt(D) * dir[d]!) / norm / Math.sqrt(group));
        v[(h * L + t) * D + d] = floatToHalf(rng.normal());
      }
    }
  }
  return { k, v, q };
}

export async function measureQuality(b: NativeBackend, o: QualityOptions): Promise<QualityResult> {
  const { k, v, q } = qualityInputs(o);
  const D = o.headDim;
  const blocks = Math.ceil(o.contextTokens / o.blockTokens);
  const shape = { qHeads: o.qHeads, kvHeads: o.kvHeads, headDim: D, blockTokens: o.blockTokens, contextTokens: o.contextTokens };
  const geometry = (groupSize: number) => ({ kvHeads: o.kvHeads, blockTokens: o.blockTokens, headDim: D, groupSize });
  const fp16 = packCache(geometry(128), o.contextTokens, k, v, Array(blocks).fill('fp16'), false);
  const ref = (await attentionOn(b, { ...shape, groupSize: 128 }, fp16, q)).out;

  const rows: QualityRow[] = [];
  const rotated = { k: rotateHalves(k, D), v: rotateHalves(v, D), q: Float32Array.from(hadamardRef(q, o.qHeads, D)) };
  for (const s of o.settings) {
    const src = s.rotation ? rotated : { k, v, q };
    const precision = `int${s.bits}` as Precision;
    const cache = packCache(geometry(s.groupSize), o.contextTokens, src.k, src.v, Array(blocks).fill(precision), false);
    let out: ArrayLike<number> = (await attentionOn(b, { ...shape, groupSize: s.groupSize }, cache, src.q)).out;
    if (s.rotation) out = hadamardRef(out, o.qHeads, D); // back to the original basis
    const e = errors(out, ref);
    // element error of K and V in the original basis
    let se = 0;
    for (const [orig, stored] of [[k, src.k], [v, src.v]] as const) {
      const deq = dequantizeRef(quantizeRef(stored, s.bits, s.groupSize), stored.length, s.bits, s.groupSize);
      const back = s.rotation ? hadamardRef(Array.from(deq, halfToFloat), deq.length / D, D) : Array.from(deq, halfToFloat);
      for (let i = 0; i < orig.length; i++) se += (back[i]! - halfToFloat(orig[i]!)) ** 2;
    }
    rows.push({ ...s, outputRmse: e.rmse, outputRelL2: e.rel, kvRmse: Math.sqrt(se / (2 * k.length)) });
  }

  const policies: PolicyRow[] = [];
  for (const p of o.policies) {
    const g = geometry(o.policyGroupSize);
    const precisions = Array.from({ length: blocks }, (_, i) => p.precisionOf(i, blocks));
    const cache = packCache(g, o.contextTokens, k, v, precisions, false);
    const out = (await attentionOn(b, { ...shape, groupSize: o.policyGroupSize }, cache, q)).out;
    const e = errors(out, ref);
    const avgBits = precisions.reduce((s, x) => s + bitsPerElement(g, x), 0) / blocks;
    policies.push({ label: p.label, avgBits, outputRmse: e.rmse, outputRelL2: e.rel });
  }
  return { rows, policies };
}

/** Mixed FP16 (sinks + most recent blocks) / INT-b elsewhere with `fp16Share` of the blocks in FP16. */
export function sinkRecentPolicy(label: string, low: Precision, fp16Share: number): QualityPolicy {
  return {
    label,
    precisionOf: (i, blocks) => {
      const keep = Math.max(1, Math.round(fp16Share * blocks));
      return i === 0 || i >= blocks - (keep - 1) ? 'fp16' : low;
    },
  };
}

export const uniformPolicy = (p: Precision): QualityPolicy => ({ label: `uniform ${p}`, precisionOf: () => p });
