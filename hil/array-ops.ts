// Runs one kernel on whole arrays through a backend: allocate device regions, upload,
// launch on the compute stream between two events, wait, download, free. For tests,
// quality measurements and benchmarks; the executor works on regions directly.
import type { MemKind, NativeBackend } from './addon-types.js';
import type { PackedCache } from './block-pack.js';
import { encodeBlockTable, type Precision } from './kv-format.js';
import type { AttentionShape } from './reference/paged-attention.js';

export interface Timed<T> {
  out: T;
  ms: number;
}

async function withRegions<T>(b: NativeBackend, sizes: number[], kind: MemKind, fn: (ids: number[]) => Promise<T>): Promise<T> {
  const ids: number[] = [];
  try {
    for (const s of sizes) ids.push(b.alloc(kind, Math.max(16, s)));
    return await fn(ids);
  } finally {
    for (const id of ids) b.free(id);
  }
}

async function timed(b: NativeBackend, launch: () => void): Promise<number> {
  const e0 = b.createEvent();
  const e1 = b.createEvent();
  try {
    b.record('compute', e0);
    launch();
    b.record('compute', e1);
    await b.synchronize();
    return b.elapsedMs(e0, e1);
  } finally {
    b.destroyEvent(e0);
    b.destroyEvent(e1);
  }
}

const bytesOf = (a: ArrayBufferView): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

export async function quantizeOn(b: NativeBackend, src: Uint16Array, bits: 2 | 3 | 4 | 8, groupSize: number): Promise<Timed<{ codes: Uint8Array; meta: Uint16Array }>> {
  const n = src.length;
  const codesBytes = (n * bits) / 8;
  const metaBytes = (n / groupSize) * 4;
  return withRegions(b, [n * 2, codesBytes, metaBytes], 'device', async ([s, c, m]) => {
    b.write(s!, 0, src);
    const ms = await timed(b, () => b.quantize('compute', { src: s!, codes: c!, meta: m!, n, bits, groupSize }));
    const codes = b.read(c!, 0, codesBytes);
    const meta = new Uint16Array(b.read(m!, 0, metaBytes).buffer.slice(0));
    return { out: { codes, meta }, ms };
  });
}

export async function dequantizeOn(b: NativeBackend, codes: Uint8Array, meta: Uint16Array, n: number, bits: 2 | 3 | 4 | 8, groupSize: number): Promise<Timed<Uint16Array>> {
  return withRegions(b, [codes.byteLength, meta.byteLength, n * 2], 'device', async ([c, m, d]) => {
    b.write(c!, 0, codes);
    b.write(m!, 0, meta);
    const ms = await timed(b, () => b.dequantize('compute', { codes: c!, meta: m!, dst: d!, n, bits, groupSize }));
    return { out: new Uint16Array(b.read(d!, 0, n * 2).buffer.slice(0)), ms };
  });
}

export async function hadamardOn(b: NativeBackend, data: Float32Array | Uint16Array, rows: number, n: number): Promise<Timed<Float32Array | Uint16Array>> {
  const f16 = data instanceof Uint16Array;
  return withRegions(b, [data.byteLength], 'device', async ([r]) => {
    b.write(r!, 0, data);
    const ms = await timed(b, () => b.hadamard('compute', { data: r!, rows, n, dtype: f16 ? 'f16' : 'f32' }));
    const raw = b.read(r!, 0, data.byteLength).buffer.slice(0);
    return { out: f16 ? new Uint16Array(raw) : new Float32Array(raw), ms };
  });
}

export async function gemvOn(b: NativeBackend, w: Uint16Array, x: Float32Array, rows: number, cols: number): Promise<Timed<Float32Array>> {
  return withRegions(b, [w.byteLength, x.byteLength, rows * 4], 'device', async ([wr, xr, yr]) => {
    b.write(wr!, 0, w);
    b.write(xr!, 0, x);
    const ms = await timed(b, () => b.gemv('compute', { w: wr!, x: xr!, y: yr!, rows, cols }));
    return { out: new Float32Array(b.read(yr!, 0, rows * 4).buffer.slice(0)), ms };
  });
}

export interface AttentionRun {
  splits?: number;
  /** Where the block table lives: device memory (default) or pinned host memory. */
  tableKind?: 'device' | 'pinned';
  /** Pass the table's precision as `uniformPrecision` when every block has it (default true). */
  promiseUniform?: boolean;
}

/** The precision every entry shares, or undefined for a mixed (or empty) table. */
export function uniformPrecisionOf(table: readonly { precision: Precision }[]): Precision | undefined {
  const p = table[0]?.precision;
  return p !== undefined && table.every((e) => e.precision === p) ? p : undefined;
}

export async function attentionOn(b: NativeBackend, shape: AttentionShape, cache: PackedCache, q: Float32Array, run: AttentionRun = {}): Promise<Timed<Float32Array>> {
  const table = encodeBlockTable(cache.table);
  const uniform = run.promiseUniform === false ? undefined : uniformPrecisionOf(cache.table.slice(0, Math.ceil(shape.contextTokens / shape.blockTokens)));
  const outBytes = shape.qHeads * shape.headDim * 4;
  return withRegions(b, [cache.arena.byteLength, q.byteLength, outBytes], 'device', async ([a, qr, o]) =>
    withRegions(b, [table.byteLength], run.tableKind ?? 'device', async ([t]) => {
      b.write(a!, 0, cache.arena);
      b.write(t!, 0, table);
      b.write(qr!, 0, q);
      b.write(o!, 0, new Float32Array(outBytes / 4).fill(NaN)); // poisoned: every element must be written
      const ms = await timed(b, () =>
        b.attention('compute', { ...shape, arena: a!, arenaBytes: cache.arena.byteLength, table: t!, q: qr!, out: o!, splits: run.splits ?? 0, ...(uniform ? { uniformPrecision: uniform } : {}) }),
      );
      return { out: new Float32Array(b.read(o!, 0, outBytes).buffer.slice(0)), ms };
    }),
  );
}

export { bytesOf };
