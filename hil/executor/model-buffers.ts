/**
 * The model's side of a run: query and output of the attention, the projections' input and output,
 * and weight buffers (at most maxWeightBytes of distinct weights; layers beyond reuse them
 * round-robin) plus the LM head, filled with seeded values (no Inf/NaN). Each layer's projections
 * are one GEMV over its weight bytes; the LM head one GEMV after the last layer.
 */
import type { ModelSpec } from '../../sim/models/model.js';
import type { NativeBackend } from '../addon-types.js';
import type { RunRegions } from './run-regions.js';
import type { StreamedWeights } from './lowered-plan.js';

export const WRITE_CHUNK = 32 << 20;

export interface ModelBuffers {
  q: number;
  out: number;
  x: number;
  y: number;
  rows: number;
  cols: number;
  headRows: number;
  weights: number[];
  /** -1: the model has no LM-head bytes */
  head: number;
  /** rows of a streamed layer's projections (its stored bytes read as FP16 rows of `cols`) */
  streamedRows: number;
}

/**
 * With weight streaming: the pinned host region of the streamed layers' weights (seeded halves, as the
 * resident ones) and the HBM slots they are copied into (regions 'weights' and 'wslots').
 */
function allocStreamed(b: NativeBackend, mem: RunRegions, w: StreamedWeights, seed: number): void {
  const host = mem.alloc('pinned', w.hostLayers * w.strideBytes);
  writeRandomHalves(b, host, w.hostLayers * w.strideBytes, seed + 5);
  mem.regions.set('weights', host);
  mem.regions.set('wslots', mem.alloc('device', w.buffers * w.strideBytes));
}

export function allocModelBuffers(b: NativeBackend, mem: RunRegions, model: ModelSpec, seed: number, maxWeightBytes: number, streamed?: StreamedWeights): ModelBuffers {
  const qBytes = model.q_heads * model.head_dim * 4;
  const q = mem.alloc('device', qBytes);
  const out = mem.alloc('device', qBytes);
  const rows = Math.max(8, Math.round(model.weight_bytes_per_layer / 2 / model.hidden));
  const cols = model.hidden;
  const headRows = Math.max(8, Math.round(model.other_weight_bytes / 2 / 2 / model.hidden));
  const streamedRows = streamed ? Math.min(Math.floor(streamed.strideBytes / 2 / model.hidden), Math.max(8, Math.floor(streamed.layerBytes / 2 / model.hidden))) : 0;
  const x = mem.alloc('device', cols * 4);
  const y = mem.alloc('device', Math.max(rows, headRows, streamedRows) * 4);
  if (streamed) allocStreamed(b, mem, streamed, seed);
  b.write(q, 0, randomFloats(seed + 1, qBytes / 4));
  b.write(x, 0, randomFloats(seed + 2, cols));
  const wBytes = rows * cols * 2;
  const nW = Math.max(1, Math.min(model.layers, Math.floor(maxWeightBytes / wBytes)));
  const weights: number[] = [];
  for (let i = 0; i < nW; i++) {
    const w = mem.alloc('device', wBytes);
    if (i === 0) writeRandomHalves(b, w, wBytes, seed + 3);
    else b.copy('compute', w, 0, weights[0], 0, wBytes);
    weights.push(w);
  }
  const head = model.other_weight_bytes > 0 ? mem.alloc('device', headRows * cols * 2) : -1;
  if (head >= 0) writeRandomHalves(b, head, headRows * cols * 2, seed + 4);
  return { q, out, x, y, rows, cols, headRows, weights, head, streamedRows };
}

function randomFloats(seed: number, n: number): Float32Array {
  let a = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    out[i] = a / 4294967296 - 0.5;
  }
  return out;
}

function writeRandomHalves(b: NativeBackend, region: number, bytes: number, seed: number): void {
  const chunk = new Uint32Array(Math.min(bytes, WRITE_CHUNK) / 4);
  let a = seed >>> 0;
  for (let i = 0; i < chunk.length; i++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    chunk[i] = a & 0x3bff3bff; // small positive and negative-free halves: no Inf/NaN
  }
  for (let off = 0; off < bytes; off += chunk.byteLength) {
    const n = Math.min(chunk.byteLength, bytes - off);
    b.write(region, off, new Uint8Array(chunk.buffer, 0, n));
  }
}
