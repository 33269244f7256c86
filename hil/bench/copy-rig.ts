// What the overlap and prefetch benches share: attention over an FP16 KV cache of a Llama-3-8B
// layer (32 query heads, 8 kv heads, D 128, 16-token blocks) on one side, a pinned host region and
// an HBM region of the same size for copies on the other.
import type { AttentionOp, NativeBackend } from '../addon-types.js';
import { buildDeviceCache } from './device-cache.js';

export interface CopyRigOptions {
  contextTokens: number;
  /** bytes of each of the two copy regions */
  copyBytes: number;
  /** 'h2d' (default): pinned host -> HBM, the copies write HBM; 'd2h': HBM -> pinned host, they read it */
  direction?: 'h2d' | 'd2h';
  /** declare the table uniform FP16 (the tensor-core FP16 kernel on cuda) instead of no promise (v3) */
  uniformFp16?: boolean;
}

export interface CopyRig {
  op: AttentionOp;
  /** copy from `src` to `dst` (the direction's regions) */
  src: number;
  dst: number;
  /** frees everything; the caller synchronizes first */
  free(): void;
}

export function openCopyRig(b: NativeBackend, o: CopyRigOptions): CopyRig {
  const g = { kvHeads: 8, blockTokens: 16, headDim: 128, groupSize: 128 };
  const cache = buildDeviceCache(b, g, Array.from({ length: Math.ceil(o.contextTokens / 16) }, () => 'fp16' as const));
  const regions: number[] = [];
  // frees every region even when one free fails, then throws the first failure
  const free = () => {
    let first: unknown;
    for (const f of [...regions.map((r) => () => b.free(r)), () => cache.free()]) {
      try {
        f();
      } catch (e) {
        first ??= e;
      }
    }
    if (first !== undefined) throw first;
  };
  try {
    const alloc = (kind: 'device' | 'pinned', bytes: number) => {
      const r = b.alloc(kind, bytes);
      regions.push(r);
      return r;
    };
    const q = alloc('device', 32 * 128 * 4);
    const out = alloc('device', 32 * 128 * 4);
    b.write(q, 0, new Float32Array(32 * 128).fill(0.01));
    const host = alloc('pinned', o.copyBytes);
    const dev = alloc('device', o.copyBytes);
    const [dst, src] = o.direction === 'd2h' ? [host, dev] : [dev, host];
    const op: AttentionOp = { arena: cache.arena, table: cache.table, q, out, qHeads: 32, kvHeads: 8, contextTokens: o.contextTokens, ...(o.uniformFp16 ? { uniformPrecision: 'fp16' as const } : {}) };
    return { op, src, dst, free };
  } catch (e) {
    free();
    throw e;
  }
}
