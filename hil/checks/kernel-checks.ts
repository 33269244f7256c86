// Checks of a backend's kernels against the float64 references, shared by the vitest
// suites (test/hil) and the plain-node GPU runner (perf/hil-device-check.mjs).
// Each case draws fresh random inputs from its seed; outputs are poisoned before the run.
import type { NativeBackend } from '../addon-types.js';
import { attentionOn, dequantizeOn, gemvOn, hadamardOn, quantizeOn } from '../array-ops.js';
import { packCache } from '../block-pack.js';
import { floatToHalf, halfToFloat } from '../half.js';
import { PRECISIONS, type Precision } from '../kv-format.js';
import { gemvRef } from '../reference/gemv.js';
import { hadamardRef } from '../reference/hadamard.js';
import { type AttentionShape, pagedAttentionRef } from '../reference/paged-attention.js';
import { dequantizeRef, quantizeRef } from '../reference/quantize.js';
import { makeRng, type Rng } from '../rng.js';

export interface CheckResult {
  name: string;
  ok: boolean;
  detail: string;
  ms?: number;
}

/** Tolerances, stated once. */
export const TOLERANCE = {
  hadamardF32RelL2: 1e-6,
  hadamardF16MaxUlps: 1,
  attentionRelL2: 2e-4,
  gemvRelL2: 1e-5,
} as const;

function relL2(a: ArrayLike<number>, ref: ArrayLike<number>): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < ref.length; i++) {
    const d = a[i]! - ref[i]!;
    num += d * d;
    den += ref[i]! * ref[i]!;
  }
  return Math.sqrt(num / Math.max(den, 1e-300));
}

const hasNaN = (a: ArrayLike<number>): boolean => Array.prototype.some.call(a, (x: number) => Number.isNaN(x));

export function randomHalves(rng: Rng, n: number, scale = 1): Uint16Array {
  const out = new Uint16Array(n);
  for (let i = 0; i < n; i++) out[i] = floatToHalf(rng.normal() * scale);
  return out;
}

function firstMismatch(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return -2;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

// ---- quantize / dequantize --------------------------------------------------------------

export interface QuantCase {
  groups: number;
  bits: 2 | 3 | 4 | 8;
  groupSize: number;
  seed: number;
}

export const QUANT_CASES: QuantCase[] = [
  { groups: 1, bits: 4, groupSize: 128, seed: 1 },
  { groups: 19, bits: 8, groupSize: 32, seed: 2 },
  { groups: 99, bits: 4, groupSize: 64, seed: 3 },
  { groups: 77, bits: 2, groupSize: 128, seed: 4 },
  { groups: 989, bits: 2, groupSize: 32, seed: 5 },
  { groups: 33, bits: 8, groupSize: 128, seed: 6 },
  { groups: 7, bits: 4, groupSize: 8, seed: 7 },
  // INT3: 8 codes per 3 bytes, codes straddling bytes; one 8-element group is one 3-byte word
  { groups: 1, bits: 3, groupSize: 8, seed: 8 },
  { groups: 99, bits: 3, groupSize: 32, seed: 9 },
  { groups: 19, bits: 3, groupSize: 128, seed: 10 },
];

export async function checkQuantize(b: NativeBackend, c: QuantCase): Promise<CheckResult> {
  const rng = makeRng(c.seed);
  const n = c.groups * c.groupSize;
  const src = randomHalves(rng, n, 0.5 + rng.next() * 4);
  src[0] = 0x8000; // -0: the zero point must come out canonical (+0) everywhere
  if (n > 3) src[3] = floatToHalf(65000); // an outlier
  const ref = quantizeRef(src, c.bits, c.groupSize);
  const got = await quantizeOn(b, src, c.bits, c.groupSize);
  const codesAt = firstMismatch(got.out.codes, ref.codes);
  const metaAt = firstMismatch(got.out.meta, ref.meta);
  const deq = await dequantizeOn(b, ref.codes, ref.meta, n, c.bits, c.groupSize);
  const deqAt = firstMismatch(deq.out, dequantizeRef(ref, n, c.bits, c.groupSize));
  const name = `quantize int${c.bits} G=${c.groupSize} n=${n}`;
  const ok = codesAt === -1 && metaAt === -1 && deqAt === -1;
  return {
    name,
    ok,
    ms: got.ms,
    detail: ok ? 'codes, meta and dequantized FP16 bit-exact' : `first mismatch: codes ${codesAt}, meta ${metaAt}, dequantized ${deqAt}`,
  };
}

// ---- hadamard ------------------------------------------------------------------------------

export interface HadamardCase {
  rows: number;
  n: number;
  dtype: 'f16' | 'f32';
  seed: number;
}

export const HADAMARD_CASES: HadamardCase[] = [
  { rows: 1, n: 2, dtype: 'f32', seed: 11 },
  { rows: 19, n: 128, dtype: 'f32', seed: 12 },
  { rows: 99, n: 64, dtype: 'f16', seed: 13 },
  { rows: 7, n: 1024, dtype: 'f32', seed: 14 },
  { rows: 989, n: 128, dtype: 'f16', seed: 15 },
];

export async function checkHadamard(b: NativeBackend, c: HadamardCase): Promise<CheckResult> {
  const rng = makeRng(c.seed);
  const size = c.rows * c.n;
  const name = `hadamard ${c.dtype} rows=${c.rows} n=${c.n}`;
  if (c.dtype === 'f32') {
    const x = new Float32Array(size).map(() => rng.normal());
    const ref = hadamardRef(x, c.rows, c.n);
    const got = await hadamardOn(b, x, c.rows, c.n);
    const err = relL2(got.out as Float32Array, ref);
    return { name, ok: err <= TOLERANCE.hadamardF32RelL2 && !hasNaN(got.out), ms: got.ms, detail: `rel L2 ${err.toExponential(2)}` };
  }
  const x = randomHalves(rng, size);
  const ref = hadamardRef(Array.from(x, halfToFloat), c.rows, c.n);
  const got = (await hadamardOn(b, x, c.rows, c.n)).out as Uint16Array;
  const ordered = (h: number): number => (h & 0x8000 ? -(h & 0x7fff) : h);
  let worst = 0;
  for (let i = 0; i < size; i++) worst = Math.max(worst, Math.abs(ordered(got[i]!) - ordered(floatToHalf(ref[i]!))));
  return { name, ok: worst <= TOLERANCE.hadamardF16MaxUlps, detail: `max ${worst} FP16 ulp from the float64 result` };
}

// ---- paged attention -----------------------------------------------------------------------

export interface AttentionCase extends AttentionShape {
  mix: Precision[] | 'random';
  splits?: number;
  tableKind?: 'device' | 'pinned';
  seed: number;
  /** Standard deviations of the random K, V and q elements (defaults 1, 1, 2). */
  kScale?: number;
  vScale?: number;
  qScale?: number;
}

/** Precision runs, block by block: [['int2', 3], ['fp16', 1]] -> int2 int2 int2 fp16. */
const runsOf = (runs: [Precision, number][]): Precision[] => runs.flatMap(([p, n]) => Array<Precision>(n).fill(p));

export const ATTENTION_CASES: AttentionCase[] = [
  { qHeads: 1, kvHeads: 1, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 1, mix: ['fp16'], seed: 21 },
  { qHeads: 6, kvHeads: 2, headDim: 128, blockTokens: 16, groupSize: 64, contextTokens: 19, mix: 'random', seed: 22 },
  { qHeads: 5, kvHeads: 5, headDim: 64, blockTokens: 16, groupSize: 32, contextTokens: 99, mix: ['int4'], seed: 23 },
  { qHeads: 32, kvHeads: 8, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 989, mix: 'random', seed: 24 },
  { qHeads: 8, kvHeads: 1, headDim: 256, blockTokens: 32, groupSize: 128, contextTokens: 301, mix: 'random', seed: 25 },
  { qHeads: 4, kvHeads: 2, headDim: 128, blockTokens: 16, groupSize: 32, contextTokens: 777, mix: ['int2', 'int8'], splits: 7, seed: 26 },
  { qHeads: 14, kvHeads: 2, headDim: 64, blockTokens: 48, groupSize: 64, contextTokens: 500, mix: 'random', tableKind: 'pinned', seed: 27 },
  // Long runs of one precision per warp, broken by other precisions; the partial last chunk (NaN
  // rows past the context) is INT2.
  { qHeads: 4, kvHeads: 1, headDim: 128, blockTokens: 16, groupSize: 64, contextTokens: 1501, mix: runsOf([['int2', 27], ['int4', 14], ['fp16', 1], ['int8', 9], ['int4', 3], ['int2', 5], ['fp16', 2], ['int4', 11]]), splits: 1, seed: 28 },
  // FP16 sink and an FP16 run among INT4, INT8 and INT2 runs, 3 splits; the partial last chunk
  // (6 rows) is INT2.
  { qHeads: 8, kvHeads: 2, headDim: 64, blockTokens: 32, groupSize: 64, contextTokens: 1990, mix: runsOf([['fp16', 1], ['int4', 30], ['fp16', 4], ['int8', 6], ['int2', 22]]), splits: 3, seed: 29 },
  // INT3 blocks (3-byte pieces of 8 codes): alone at each head dim with a partial last chunk, and
  // among every other precision, with splits
  { qHeads: 4, kvHeads: 2, headDim: 64, blockTokens: 16, groupSize: 32, contextTokens: 99, mix: ['int3'], seed: 30 },
  { qHeads: 8, kvHeads: 2, headDim: 128, blockTokens: 32, groupSize: 128, contextTokens: 777, mix: ['int3'], splits: 5, seed: 31 },
  { qHeads: 2, kvHeads: 1, headDim: 256, blockTokens: 16, groupSize: 64, contextTokens: 301, mix: ['int3'], seed: 32 },
  { qHeads: 12, kvHeads: 4, headDim: 128, blockTokens: 16, groupSize: 64, contextTokens: 1003, mix: runsOf([['fp16', 1], ['int3', 20], ['int8', 3], ['int2', 7], ['int3', 5], ['int4', 9], ['fp16', 4]]), splits: 3, seed: 33 },
  // Uniform INT4 at D 128, G 128, <= 4 query heads per kv head: the tensor-core kernel's cases
  // (attention option tensor_cores; the table's uniform precision is promised by attentionOn). Odd
  // contexts (NaN rows past the context in the last block), the benchmark's head layout, 32-token
  // blocks, forced splits (more splits than chunks too), GQA 1/2/3/4, a pinned table, V scales far
  // above 16 (P' = p * scale would overflow f16 without the kernel's reference shift) and a peaked
  // softmax.
  { qHeads: 32, kvHeads: 8, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 4099, mix: ['int4'], seed: 41 },
  { qHeads: 4, kvHeads: 1, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 1, mix: ['int4'], seed: 42 },
  { qHeads: 8, kvHeads: 2, headDim: 128, blockTokens: 32, groupSize: 128, contextTokens: 1001, mix: ['int4'], splits: 7, seed: 43 },
  { qHeads: 12, kvHeads: 4, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 333, mix: ['int4'], splits: 64, seed: 44 },
  { qHeads: 2, kvHeads: 2, headDim: 128, blockTokens: 48, groupSize: 128, contextTokens: 77, mix: ['int4'], splits: 1, seed: 45 },
  { qHeads: 16, kvHeads: 8, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 2050, mix: ['int4'], tableKind: 'pinned', seed: 46 },
  { qHeads: 4, kvHeads: 1, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 1499, mix: ['int4'], splits: 2, vScale: 700, qScale: 0.5, seed: 47 },
  { qHeads: 8, kvHeads: 2, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 3001, mix: ['int4'], kScale: 3, qScale: 6, seed: 48 },
  // >= 1024 chunks per kv head: the INT4 kernel's head-warp mode (attention option int4_head_warps, on
  // by default from 16k tokens with 4 to 8 kv heads), the benchmark's head layout and a 4-kv-head
  // one with a forced split count
  { qHeads: 32, kvHeads: 8, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 16421, mix: ['int4'], seed: 49 },
  { qHeads: 8, kvHeads: 4, headDim: 128, blockTokens: 32, groupSize: 128, contextTokens: 20001, mix: ['int4'], splits: 37, seed: 50 },
  // one split: the head warps write the output itself
  { qHeads: 16, kvHeads: 4, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 16389, mix: ['int4'], splits: 1, seed: 65 },
  // Uniform FP16 at D 128, <= 4 query heads per kv head: the FP16 tensor-core kernel's cases
  // (attention option tensor_cores; the promise again by attentionOn). The same kinds as INT4's above,
  // plus q far above and far below 1 (q' = q * 2^e with e from the block's largest |q|). The
  // first case of this list (one token) runs there too.
  { qHeads: 32, kvHeads: 8, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 4099, mix: ['fp16'], seed: 51 },
  { qHeads: 4, kvHeads: 1, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 17, mix: ['fp16'], seed: 52 },
  { qHeads: 8, kvHeads: 2, headDim: 128, blockTokens: 32, groupSize: 128, contextTokens: 1001, mix: ['fp16'], splits: 7, seed: 53 },
  { qHeads: 12, kvHeads: 4, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 333, mix: ['fp16'], splits: 64, seed: 54 },
  { qHeads: 2, kvHeads: 2, headDim: 128, blockTokens: 48, groupSize: 128, contextTokens: 77, mix: ['fp16'], splits: 1, seed: 55 },
  { qHeads: 16, kvHeads: 8, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 2050, mix: ['fp16'], tableKind: 'pinned', seed: 56 },
  { qHeads: 4, kvHeads: 1, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 1499, mix: ['fp16'], splits: 2, vScale: 700, qScale: 0.5, seed: 57 },
  { qHeads: 8, kvHeads: 2, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 3001, mix: ['fp16'], kScale: 3, qScale: 6, seed: 58 },
  { qHeads: 4, kvHeads: 1, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 517, mix: ['fp16'], kScale: 0.01, qScale: 300, seed: 59 },
  { qHeads: 6, kvHeads: 2, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 260, mix: ['fp16'], qScale: 0.001, seed: 60 },
  // one split over 16k tokens: 1025 chunks per warp accumulated (the tensor cores' accumulator drifts)
  { qHeads: 8, kvHeads: 2, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 16390, mix: ['fp16'], splits: 1, seed: 67 },
  // q all zero: every score 0, the output is the mean of V
  { qHeads: 4, kvHeads: 2, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 111, mix: ['fp16'], qScale: 0, seed: 66 },
];

export function attentionInputs(c: AttentionCase): { k: Uint16Array; v: Uint16Array; q: Float32Array; precisions: Precision[] } {
  const rng = makeRng(c.seed);
  const n = c.kvHeads * c.contextTokens * c.headDim;
  const k = randomHalves(rng, n, c.kScale ?? 1);
  const v = randomHalves(rng, n, c.vScale ?? 1);
  const q = new Float32Array(c.qHeads * c.headDim).map(() => rng.normal() * (c.qScale ?? 2));
  const blocks = Math.ceil(c.contextTokens / c.blockTokens);
  const precisions = Array.from({ length: blocks }, (_, i) =>
    c.mix === 'random' ? PRECISIONS[rng.int(0, 3)]! : c.mix[i % c.mix.length]!,
  );
  return { k, v, q, precisions };
}

const mixLabel = (mix: AttentionCase['mix']): string =>
  !Array.isArray(mix) ? 'mixed' : mix.length <= 4 ? mix.join('+') : `runs of ${[...new Set(mix)].join('/')}`;

export async function checkAttention(b: NativeBackend, c: AttentionCase): Promise<CheckResult> {
  const { k, v, q, precisions } = attentionInputs(c);
  const cache = packCache({ kvHeads: c.kvHeads, blockTokens: c.blockTokens, headDim: c.headDim, groupSize: c.groupSize }, c.contextTokens, k, v, precisions);
  const ref = pagedAttentionRef(c, cache.arena, cache.table, q);
  const got = await attentionOn(b, c, cache, q, { splits: c.splits, tableKind: c.tableKind });
  const err = relL2(got.out, ref);
  const name = `attention L=${c.contextTokens} q${c.qHeads}/kv${c.kvHeads} D=${c.headDim} T=${c.blockTokens} G=${c.groupSize} ${mixLabel(c.mix)}${c.splits ? ` splits=${c.splits}` : ''}`;
  const ok = !hasNaN(got.out) && err <= TOLERANCE.attentionRelL2;
  return { name, ok, ms: got.ms, detail: `rel L2 ${err.toExponential(2)}${hasNaN(got.out) ? ' (NaN in output)' : ''}` };
}

/**
 * An unusable block-table entry (an offset past the arena) in a device-resident table: the backend
 * either refuses it, naming the entry (the host backend checks every table it can read), or the
 * kernel never reads outside the arena and every output becomes NaN (cuda). Never a finite answer
 * that silently leaves the block out, including when a whole split holds only the bad block.
 */
export interface BadEntryCase extends AttentionShape {
  precision: Precision;
  splits: number;
  badBlock: number;
  seed: number;
  /** false: no uniformPrecision promise (the general kernel, v3, whatever the table). */
  promise?: boolean;
}

export const BAD_ENTRY_CASES: BadEntryCase[] = [
  // two blocks, two splits: split 0 is the bad block alone (v3 kernel: no promise)
  { qHeads: 4, kvHeads: 1, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 32, precision: 'fp16', splits: 2, badBlock: 0, seed: 61, promise: false },
  // the same on the tensor-core kernels (uniform INT4 and FP16 tables, promised)
  { qHeads: 4, kvHeads: 1, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 32, precision: 'int4', splits: 2, badBlock: 0, seed: 62 },
  { qHeads: 4, kvHeads: 1, headDim: 128, blockTokens: 16, groupSize: 128, contextTokens: 32, precision: 'fp16', splits: 2, badBlock: 0, seed: 64 },
  // a bad block among many, the kernel's own split count
  { qHeads: 8, kvHeads: 2, headDim: 128, blockTokens: 16, groupSize: 64, contextTokens: 1000, precision: 'int8', splits: 0, badBlock: 37, seed: 63 },
];

export async function checkBadEntry(b: NativeBackend, c: BadEntryCase): Promise<CheckResult> {
  const { k, v, q } = attentionInputs({ ...c, mix: [c.precision] });
  const cache = packCache({ kvHeads: c.kvHeads, blockTokens: c.blockTokens, headDim: c.headDim, groupSize: c.groupSize }, c.contextTokens, k, v, Array(Math.ceil(c.contextTokens / c.blockTokens)).fill(c.precision));
  cache.table[c.badBlock] = { ...cache.table[c.badBlock]!, offset: Math.ceil((cache.arena.byteLength + 1) / 16) * 16 };
  const name = `attention bad entry: block ${c.badBlock} of ${cache.table.length} outside the arena, ${c.precision}${c.promise === false ? ' (no promise)' : ''}, splits=${c.splits || 'auto'}`;
  try {
    const got = await attentionOn(b, c, cache, q, { splits: c.splits, promiseUniform: c.promise });
    const finite = Array.prototype.filter.call(got.out, (x: number) => !Number.isNaN(x)).length;
    return { name, ok: finite === 0, ms: got.ms, detail: finite === 0 ? 'every output NaN' : `${finite} of ${got.out.length} outputs finite` };
  } catch (e) {
    const msg = (e as Error).message;
    const named = new RegExp(`block table entry ${c.badBlock}: block outside the arena`).test(msg);
    return { name, ok: named, detail: named ? `refused: ${msg}` : `unexpected error: ${msg}` };
  }
}

// ---- gemv ----------------------------------------------------------------------------------

export interface GemvCase {
  rows: number;
  cols: number;
  seed: number;
}

export const GEMV_CASES: GemvCase[] = [
  { rows: 1, cols: 8, seed: 31 },
  { rows: 19, cols: 136, seed: 32 },
  { rows: 99, cols: 4096, seed: 33 },
  { rows: 989, cols: 520, seed: 34 },
];

export async function checkGemv(b: NativeBackend, c: GemvCase): Promise<CheckResult> {
  const rng = makeRng(c.seed);
  const w = randomHalves(rng, c.rows * c.cols, 0.05);
  const x = new Float32Array(c.cols).map(() => rng.normal());
  const ref = gemvRef(w, x, c.rows, c.cols);
  const got = await gemvOn(b, w, x, c.rows, c.cols);
  const err = relL2(got.out, ref);
  return { name: `gemv ${c.rows}x${c.cols}`, ok: err <= TOLERANCE.gemvRelL2 && !hasNaN(got.out), ms: got.ms, detail: `rel L2 ${err.toExponential(2)}` };
}

export async function runAllKernelChecks(b: NativeBackend): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const c of QUANT_CASES) results.push(await checkQuantize(b, c));
  for (const c of HADAMARD_CASES) results.push(await checkHadamard(b, c));
  for (const c of ATTENTION_CASES) results.push(await checkAttention(b, c));
  for (const c of BAD_ENTRY_CASES) results.push(await checkBadEntry(b, c));
  for (const c of GEMV_CASES) results.push(await checkGemv(b, c));
  return results;
}
