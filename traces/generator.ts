/**
 * Seeded generator of attention traces that look like real decode attention: attention sinks, a
 * recent window, persistent Zipf heavy hitters, broad lower and concentrated upper layers,
 * query-dependent topic shifts, a broad low-mass background, and an optional needle (passkey).
 * The model of one row is in attention-row.ts, parameters and presets in generator-params.ts.
 *
 * Randomness: seedrandom (ARC4) streams, one per row and one for shift events, all derived from
 * `seed`, drive discrete decisions; per-(row, block, step) noise comes from a counter-based hash
 * keyed by seedrandom draws. Same parameters and seed => the same steps => a byte-identical file.
 *
 * Norms: step 0 gives every block's key norm; each later step gives the last block's (it gained a token).
 */
import seedrandom from 'seedrandom';
import { AttentionRow } from './attention-row.js';
import { TRACE_FORMAT, TRACE_VERSION, blocksFor, contextTokensAt, type LayerAttention, type TraceHeader, type TraceStep } from './format.js';
import {
  AUTO_DENSE_MAX_BLOCKS,
  resolveGeneratorParams,
  turnoverBudget,
  type GeneratorInput,
  type GeneratorParams,
} from './generator-params.js';
import { standardNormals } from './hash-noise.js';
import { blockKeyNorm } from './key-norms.js';
import { kthLargest } from './kth-largest.js';
import { TraceWriter, type TraceWriterOptions } from './trace-writer.js';

export const GENERATOR_NAME = 'kvtier-generator';
export const GENERATOR_VERSION = 1;

/** The encoding and topk a generated trace uses. */
export function generatedEncoding(p: GeneratorParams): { encoding: 'dense' | 'topk'; topk?: number } {
  const lastBlocks = blocksFor(contextTokensAt(p, Math.max(0, p.steps - 1)), p.block_size);
  const enc = p.encoding === 'auto' ? (lastBlocks > AUTO_DENSE_MAX_BLOCKS ? 'topk' : 'dense') : p.encoding;
  return enc === 'topk' ? { encoding: 'topk', topk: p.topk } : { encoding: 'dense' };
}

/** The header of the trace these parameters generate (provenance holds every resolved parameter). */
export function generatedHeader(input: GeneratorInput | GeneratorParams = {}): TraceHeader {
  const p = resolveGeneratorParams(input as GeneratorInput);
  const enc = generatedEncoding(p);
  const preset = (input as GeneratorInput).preset ?? 'default';
  return {
    format: TRACE_FORMAT,
    version: TRACE_VERSION,
    model: p.model,
    layers: p.layers,
    block_size: p.block_size,
    prompt_tokens: p.prompt_tokens,
    steps: p.steps,
    kv_groups: p.kv_groups,
    ...enc,
    provenance: {
      source: 'generator',
      generator: GENERATOR_NAME,
      generator_version: GENERATOR_VERSION,
      preset,
      seed: p.seed,
      params: p,
    },
  };
}

/**
 * The steps of a generated trace, one at a time. Each step owns its typed arrays (nothing is
 * reused), so steps may be kept.
 */
export function* generateSteps(input: GeneratorInput = {}): Generator<TraceStep, void, undefined> {
  const p = resolveGeneratorParams(input);
  const { encoding, topk } = generatedEncoding(p);
  const rowsN = p.layers * p.kv_groups;
  const maxBlocks = blocksFor(contextTokensAt(p, Math.max(0, p.steps - 1)), p.block_size);
  const normals = standardNormals();
  const master = seedrandom(`${String(p.seed)}/keys`);
  const replaceProb = turnoverBudget(p).random;
  const rows: AttentionRow[] = [];
  const normKeys: number[] = [];
  for (let r = 0; r < rowsN; r++) {
    const keys = { bg: master.int32() >>> 0, jit: master.int32() >>> 0, hh: master.int32() >>> 0 };
    normKeys.push(master.int32() >>> 0);
    rows.push(new AttentionRow(p, Math.floor(r / p.kv_groups), r, keys, normals, maxBlocks, replaceProb));
  }
  const shifts = seedrandom(`${String(p.seed)}/shifts`);
  const w = new Float64Array(maxBlocks);
  const scratch = new Float64Array(maxBlocks);
  let prevCtx = contextTokensAt(p, 0);
  for (let s = 0; s < p.steps; s++) {
    const ctx = contextTokensAt(p, s);
    const n = blocksFor(ctx, p.block_size);
    let shiftAt: number | null = null;
    if (s > 0 && p.shift_every > 0 && shifts.quick() < 1 / p.shift_every) shiftAt = shifts.quick();
    const layers = new Array<LayerAttention>(rowsN);
    for (let r = 0; r < rowsN; r++) {
      const total = rows[r]!.weights(s, ctx, prevCtx, shiftAt, w);
      const row = encoding === 'dense' ? denseRow(w, n, total) : topkRow(w, scratch, n, total, topk!);
      const normFrom = s === 0 ? 0 : n - 1;
      const norms = new Float32Array(n - normFrom);
      for (let b = normFrom; b < n; b++) norms[b - normFrom] = blockKeyNorm(p, normals, normKeys[r]!, b, ctx);
      layers[r] = { nBlocks: n, ...row, normFrom, norms };
    }
    prevCtx = ctx;
    yield { step: s, contextTokens: ctx, layers };
  }
}

type MassPart = Pick<LayerAttention, 'idx' | 'mass' | 'remainder'>;

function denseRow(w: Float64Array, n: number, total: number): MassPart {
  const mass = new Float32Array(n);
  const f = 1 / total;
  for (let b = 0; b < n; b++) mass[b] = w[b]! * f;
  return { idx: null, mass, remainder: 0 };
}

/** The k heaviest blocks in ascending block order; ties at the threshold go to the lower blocks. */
function topkRow(w: Float64Array, scratch: Float64Array, n: number, total: number, k: number): MassPart {
  const listed = Math.min(k, n);
  scratch.set(w.subarray(0, n));
  const thr = kthLargest(scratch, n, listed);
  let above = 0;
  for (let b = 0; b < n; b++) if (w[b]! > thr) above++;
  let ties = listed - above;
  const idx = new Uint32Array(listed);
  const mass = new Float32Array(listed);
  const f = 1 / total;
  let sum = 0;
  let i = 0;
  for (let b = 0; b < n && i < listed; b++) {
    const v = w[b]!;
    if (v > thr || (v === thr && ties-- > 0)) {
      idx[i] = b;
      mass[i] = v * f;
      sum += mass[i]!;
      i++;
    }
  }
  const remainder = listed === n ? 0 : Math.min(1, Math.max(0, 1 - sum));
  return { idx, mass, remainder };
}

/** Generate a trace file; returns its header and size. Refuses to overwrite unless told. */
export function generateTrace(
  path: string,
  input: GeneratorInput = {},
  options: Pick<TraceWriterOptions, 'overwrite'> = {},
): { header: TraceHeader; bytes: number } {
  const header = generatedHeader(input);
  const writer = new TraceWriter(path, header, options);
  try {
    for (const step of generateSteps(input)) writer.writeStep(step);
    writer.close();
    return { header: writer.header, bytes: writer.bytesWritten };
  } catch (e) {
    writer.abort();
    throw e;
  }
}

export {
  DEFAULT_GENERATOR_PARAMS,
  PRESETS,
  PRESET_NAMES,
  resolveGeneratorParams,
  type GeneratorInput,
  type GeneratorParams,
  type NeedleParams,
  type PresetName,
} from './generator-params.js';
