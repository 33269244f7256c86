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
  /** shared memory per multiprocessor and the part of it reserved per block (cuda; 0 on host) */
  sharedMemPerSmBytes: number;
  reservedSharedMemPerBlockBytes: number;
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
  bits: 2 | 3 | 4 | 8;
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
  bits: 2 | 3 | 4 | 8;
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
   * may then run a kernel made for that precision (the tensor-core INT4 and FP16 kernels, under
   * the backend's attention options). A broken promise is an error where the table is
   * host-readable (host backend, pinned tables); on a device table that kernel's output is NaN.
   */
  uniformPrecision?: Precision;
}

/** The shape of one attention call, as the dispatch sees it (AttentionOp without the regions). */
export type AttentionCallShape = Pick<AttentionOp, 'qHeads' | 'kvHeads' | 'headDim' | 'blockTokens' | 'groupSize' | 'contextTokens' | 'softmaxScale' | 'splits' | 'uniformPrecision'>;

/**
 * Attention options by name (the native table, hil/native/common/attention-options.h: see
 * `kvtier hil options`); values as text, whole numbers or booleans (on / off). Absent: the default.
 */
export type AttentionOptions = Record<string, string | number | boolean>;
/** Every option with its value, as the native parser reads it back. */
export type ResolvedAttentionOptions = Record<string, string | number>;

export interface AttentionOptionSpec {
  name: string;
  /** the valid values, as a user writes them */
  values: string;
  default: string;
  description: string;
}

/** What the dispatch needs to know about the device (hil/native/common/attention-plan.h). */
export interface AttentionDeviceFacts {
  multiprocessors: number;
  l2Bytes: number;
  /** for the resident-block estimate when residentBlocks is 0 or absent */
  sharedMemPerSmBytes?: number;
  reservedSharedMemPerBlockBytes?: number;
  /** resident blocks per SM of the chosen kernel (the cuda backend asks the compiled kernel) */
  residentBlocks?: number;
}

/** The kernel configuration of one attention call. */
export interface AttentionPlan {
  kernel: 'v3' | 'mma-int4' | 'mma-fp16' | 'host';
  stages: number;
  /** one warp per kv head, grid (splits), instead of 4 warps per kv head, grid (splits, kvHeads) */
  headWarps: boolean;
  queryHeadsPerWarp: number;
  warpsPerBlock: number;
  grid: [number, number];
  dynamicSmemBytes: number;
  bulkCopy: boolean;
  /** chunks each warp asks for before it prepares q */
  earlyChunks: number;
  /** the call's FP16 KV exceeds the L2 (the FP16 tensor-core kernel's rule; false elsewhere) */
  kvExceedsL2: boolean;
  l2Policy: 'evict-first' | 'normal';
  residentBlocks: number;
  splits: number;
  chunksPerWarp: number;
  reduce: 'split' | 'none';
  pdlReduce: boolean;
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
  /** the kernel configuration a call of this shape runs with, under this backend's options */
  attentionPlan(shape: AttentionCallShape): AttentionPlan;
  /** every attention option this backend runs with */
  attentionOptions(): ResolvedAttentionOptions;
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
  Backend: new (kind?: BackendKind | 'auto', device?: number, options?: { attention?: AttentionOptions }) => NativeBackend;
  /** the attention dispatch without a GPU: the same function the cuda backend calls */
  attentionPlan(shape: AttentionCallShape, options: AttentionOptions | undefined, device: AttentionDeviceFacts): AttentionPlan;
  /** every option with its value; throws, naming the option and its valid values, on a bad one */
  attentionOptions(options?: AttentionOptions): ResolvedAttentionOptions;
  attentionOptionTable(): AttentionOptionSpec[];
  FileTier: new (
    backend: NativeBackend,
    opts: { path: string; bytes: number; direct?: boolean; threads?: number; removeOnClose?: boolean },
  ) => NativeFileTier;
}
