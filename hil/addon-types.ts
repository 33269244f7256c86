// TypeScript view of the native addon (hil/native/binding.cc). Region and event ids are
// plain numbers; offsets and sizes are bytes.
import type { Precision } from './kv-format.js';

export type BackendKind = 'cuda' | 'host';
export type MemKind = 'device' | 'pinned' | 'pageable';
/** compute (highest priority) and two memory streams (normal priority) */
export type StreamName = 'compute' | 'memory' | 'memory2';

export interface DeviceInfo {
  name: string;
  computeCapability: string;
  totalMemBytes: number;
  multiprocessors: number;
  l2Bytes: number;
  pciGeneration: number;
  pciWidth: number;
  runtimeVersion: number;
  driverVersion: number;
  computePriority: number;
  memoryPriority: number;
  hostThreads: number;
}

export interface CudaProbe {
  compiled: boolean;
  available: boolean;
  reason: string;
  device?: DeviceInfo;
}

export interface QuantizeOp {
  src: number;
  srcOffset?: number;
  codes: number;
  codesOffset?: number;
  meta: number;
  metaOffset?: number;
  n: number;
  bits: 2 | 4 | 8;
  groupSize?: number;
}

export interface DequantizeOp {
  codes: number;
  codesOffset?: number;
  meta: number;
  metaOffset?: number;
  dst: number;
  dstOffset?: number;
  n: number;
  bits: 2 | 4 | 8;
  groupSize?: number;
}

export interface HadamardOp {
  data: number;
  dataOffset?: number;
  rows: number;
  n: number;
  dtype: 'f16' | 'f32';
}

export interface AttentionOp {
  arena: number;
  arenaOffset?: number;
  arenaBytes?: number;
  table: number;
  tableOffset?: number;
  q: number;
  qOffset?: number;
  out: number;
  outOffset?: number;
  qHeads: number;
  kvHeads: number;
  headDim?: number;
  blockTokens?: number;
  groupSize?: number;
  contextTokens: number;
  softmaxScale?: number;
  splits?: number;
  /**
   * The caller's promise that every block-table entry has this precision. The cuda backend
   * may then run a kernel made for that precision (KVTIER_HIL_ATTN_MMA=1: the tensor-core INT4
   * kernel). A broken promise is an error where the table is host-readable (host backend,
   * pinned tables); on a device table that kernel's output is NaN.
   */
  uniformPrecision?: Precision;
}

export interface GemvOp {
  w: number;
  wOffset?: number;
  x: number;
  xOffset?: number;
  y: number;
  yOffset?: number;
  rows: number;
  cols: number;
}

export interface FileIoResult {
  ms: number;
  bytes: number;
  direct: boolean;
  /** pread/pwrite calls issued (requests split at chunkBytes) */
  requests: number;
}

export interface NativeFileTier {
  readonly direct: boolean;
  readonly bufferedReason: string;
  readonly path: string;
  readonly bytes: number;
  readonly threads: number;
  write(region: number, regionOffset: number, fileOffset: number, bytes: number, opts?: { chunkBytes?: number; sync?: boolean }): Promise<FileIoResult>;
  read(region: number, regionOffset: number, fileOffset: number, bytes: number, opts?: { chunkBytes?: number }): Promise<FileIoResult>;
  /**
   * many reads as one batch: spans holds [regionOffset, fileOffset, bytes] per request; every chunk of
   * every request is queued on the tier's I/O threads at once (one promise, not bounded by libuv's pool)
   */
  readBatch(region: number, spans: Float64Array, opts?: { chunkBytes?: number }): Promise<FileIoResult>;
  close(): void;
}

export interface NativeBackend {
  readonly kind: BackendKind;
  info(): DeviceInfo;
  alloc(kind: MemKind, bytes: number): number;
  free(region: number): void;
  regionBytes(region: number): number;
  write(region: number, offset: number, data: ArrayBufferView | ArrayBuffer): void;
  read(region: number, offset: number, bytes: number): Uint8Array;
  copy(stream: StreamName, dst: number, dstOffset: number, src: number, srcOffset: number, bytes: number, repeat?: number): void;
  /** copies: [dst, dstOffset, src, srcOffset, bytes] per copy; copy i goes on streams[i % streams.length] */
  copyMany(streams: StreamName | StreamName[], copies: Float64Array): void;
  /** all copies as one batch on one stream (cuda: one cudaMemcpyBatchAsync); copies must not overlap */
  copyBatch(stream: StreamName, copies: Float64Array): void;
  quantize(stream: StreamName, op: QuantizeOp): void;
  dequantize(stream: StreamName, op: DequantizeOp): void;
  hadamard(stream: StreamName, op: HadamardOp): void;
  attention(stream: StreamName, op: AttentionOp, repeat?: number): void;
  gemv(stream: StreamName, op: GemvOp, repeat?: number): void;
  createEvent(): number;
  destroyEvent(event: number): void;
  record(stream: StreamName, event: number): void;
  waitEvent(stream: StreamName, event: number): void;
  elapsedMs(from: number, to: number): number;
  synchronize(stream?: StreamName): Promise<void>;
  close(): void;
}

export interface HilAddon {
  abiVersion: number;
  probeCuda(): CudaProbe;
  Backend: new (kind?: BackendKind | 'auto', device?: number) => NativeBackend;
  FileTier: new (
    backend: NativeBackend,
    opts: { path: string; bytes: number; direct?: boolean; threads?: number; removeOnClose?: boolean },
  ) => NativeFileTier;
}
