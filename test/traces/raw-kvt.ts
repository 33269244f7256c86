/**
 * Test helpers: an independent .kvt encoder written from FORMAT.md with DataView (no checks, so
 * tests can build invalid files), a reference checksum, and small step builders.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll } from 'vitest';
import { TRACE_FORMAT, TRACE_VERSION, blocksFor, contextTokensAt, type LayerAttention, type TraceHeader, type TraceStep } from '../../traces/format.js';
import { generateTrace } from '../../traces/generator.js';

/** sum_i w[i] (2i+1) mod 2^32 with BigInt: slow and obviously right. */
export function referenceChecksum(bytes: Uint8Array): number {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let c = 0n;
  for (let i = 0; i * 4 < bytes.length; i++) c += BigInt(dv.getUint32(4 * i, true)) * BigInt(2 * i + 1);
  return Number(c % 2n ** 32n);
}

class Bytes {
  private parts: number[] = [];
  u32(v: number): this {
    this.parts.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff);
    return this;
  }
  f32(v: number): this {
    const dv = new DataView(new ArrayBuffer(4));
    dv.setFloat32(0, v, true);
    for (let i = 0; i < 4; i++) this.parts.push(dv.getUint8(i));
    return this;
  }
  raw(b: Uint8Array): this {
    for (const x of b) this.parts.push(x);
    return this;
  }
  get length(): number {
    return this.parts.length;
  }
  bytes(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

export interface RawOptions {
  /** header JSON text as written (default JSON.stringify(header)) */
  json?: string;
  version?: number;
  /** skip the end record */
  noEnd?: boolean;
  endCount?: number;
}

export function encodeRaw(header: TraceHeader | Record<string, unknown>, steps: TraceStep[], o: RawOptions = {}): Uint8Array {
  const enc = (header as TraceHeader).encoding;
  const out = new Bytes().raw(Uint8Array.from([0x4b, 0x56, 0x54, 0x52, 0x41, 0x43, 0x45, 0x00]));
  let json = Buffer.from(o.json ?? JSON.stringify(header), 'utf8') as Uint8Array;
  const padded = new Uint8Array(Math.ceil(json.length / 4) * 4).fill(0x20);
  padded.set(json);
  json = padded;
  out.u32(o.version ?? 1).u32(json.length).u32(referenceChecksum(json)).raw(json);
  for (const s of steps) {
    const p = new Bytes();
    for (const a of s.layers) {
      p.u32(a.nBlocks).u32(a.mass.length).f32(a.remainder).u32(a.normFrom).u32(a.norms.length);
      if (enc === 'topk') for (const i of a.idx!) p.u32(i);
      for (const m of a.mass) p.f32(m);
      for (const n of a.norms) p.f32(n);
    }
    const payload = p.bytes();
    out.u32(0x5453564b).u32(s.step).u32(payload.length).u32(referenceChecksum(payload)).raw(payload);
  }
  if (!o.noEnd) out.u32(0x444e454b).u32(o.endCount ?? steps.length).u32(0).u32(0);
  return out.bytes();
}

/** One temporary root per test file, removed after the file's tests. */
let tmpRoot: string | null = null;
afterAll(() => {
  if (tmpRoot !== null) fs.rmSync(tmpRoot, { recursive: true, force: true });
  tmpRoot = null;
});

export function tmpDir(): string {
  tmpRoot ??= fs.mkdtempSync(path.join(os.tmpdir(), 'kvt-test-'));
  return fs.mkdtempSync(path.join(tmpRoot, 'd-'));
}

export function header(over: Partial<TraceHeader> = {}): TraceHeader {
  return {
    format: TRACE_FORMAT,
    version: TRACE_VERSION,
    model: 'tiny',
    layers: 2,
    block_size: 4,
    prompt_tokens: 10,
    steps: 3,
    kv_groups: 1,
    encoding: 'dense',
    provenance: { source: 'test' },
    ...over,
  };
}

/** A uniform row (dense) or the first min(k, n) blocks listed uniformly with the rest as remainder (topk). */
export function uniformLayer(h: TraceHeader, step: number, normFrom = 0, nNorms = 0): LayerAttention {
  const n = blocksFor(contextTokensAt(h, step), h.block_size);
  if (h.encoding === 'dense') {
    return { nBlocks: n, idx: null, mass: new Float32Array(n).fill(1 / n), remainder: 0, normFrom, norms: new Float32Array(nNorms).fill(1) };
  }
  const k = Math.min(h.topk!, n);
  const idx = Uint32Array.from({ length: k }, (_, i) => n - 1 - i);
  return { nBlocks: n, idx, mass: new Float32Array(k).fill(1 / n), remainder: k === n ? 0 : (n - k) / n, normFrom, norms: new Float32Array(nNorms).fill(1) };
}

/** Deterministic varied rows: mass shaped by (step, row), norms for new blocks. */
export function variedSteps(h: TraceHeader): TraceStep[] {
  const steps: TraceStep[] = [];
  const rows = h.layers * h.kv_groups;
  for (let s = 0; s < h.steps; s++) {
    const ctx = contextTokensAt(h, s);
    const n = blocksFor(ctx, h.block_size);
    const layers: LayerAttention[] = [];
    for (let r = 0; r < rows; r++) {
      const w = Array.from({ length: n }, (_, b) => 1 + ((b * 7 + s * 3 + r * 5) % 11));
      const total = w.reduce((a, x) => a + x, 0);
      const normFrom = s === 0 ? 0 : n - 1;
      const norms = Float32Array.from({ length: n - normFrom }, (_, i) => 10 + r + (normFrom + i) / 8);
      if (h.encoding === 'dense') {
        layers.push({ nBlocks: n, idx: null, mass: Float32Array.from(w, (x) => x / total), remainder: 0, normFrom, norms });
      } else {
        const order = Array.from({ length: n }, (_, b) => b).sort((a, b) => w[b]! - w[a]! || a - b);
        const k = Math.min(h.topk!, n);
        const idx = Uint32Array.from(order.slice(0, k));
        const mass = Float32Array.from(idx, (b) => w[b]! / total);
        const listed = mass.reduce((a, x) => a + x, 0);
        layers.push({ nBlocks: n, idx, mass, remainder: k === n ? 0 : Math.max(0, 1 - listed), normFrom, norms });
      }
    }
    steps.push({ step: s, contextTokens: ctx, layers });
  }
  return steps;
}

/**
 * A small generated trace in `dir` and its bytes: 2 layers x 2 KV groups, 60-token prompt in blocks of
 * 4 tokens (16..17 blocks over 6 steps), top 6 listed for topk, so every top-k row has a remainder.
 */
export function smallTrace(dir: string, name: string, encoding: 'topk' | 'dense'): { file: string; bytes: Uint8Array } {
  const file = path.join(dir, name);
  generateTrace(file, { model: 'tiny', layers: 2, kv_groups: 2, prompt_tokens: 60, steps: 6, block_size: 4, encoding, topk: 6, seed: 7 });
  return { file, bytes: new Uint8Array(fs.readFileSync(file)) };
}
