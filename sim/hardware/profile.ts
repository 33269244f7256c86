/**
 * Hardware profile types (kvtier-hardware v1). Profiles are JSON data with units in field names;
 * `validateProfile` (validate-profile.ts) checks a parsed JSON value against this shape.
 */
export type TierKind = 'hbm' | 'dram' | 'cxl' | 'nvme' | 'hdd' | 'remote';
export const TIER_KINDS: readonly TierKind[] = ['hbm', 'dram', 'cxl', 'nvme', 'hdd', 'remote'];

export interface TierSpec {
  /** unique name, used by links and policies ("hbm", "dram", "cxl", "nvme", "hdd") */
  name: string;
  kind: TierKind;
  capacity_GiB: number;
  /** sustained device bandwidth of the memory/storage itself */
  read_GBps: number;
  write_GBps: number;
  /** access latency added once per transfer that reads (writes) this tier */
  read_latency_us: number;
  write_latency_us: number;
}

/** One direction of a link: time = alpha_us + bytes / GBps. */
export interface LinkDirection {
  alpha_us: number;
  GBps: number;
  /**
   * optional: alpha of a copy that starts while a kernel runs on the compute stream (measured on the
   * H100: ~5.5 us against ~2.5 us with the GPU otherwise idle); absent = alpha_us
   */
  alpha_under_compute_us?: number;
  /**
   * optional: added to a copy in this direction on the memory stream when the stream's previous copy
   * went the other way (D2H after H2D or H2D after D2H: one stream's copies do not overlap across the
   * change); absent = 0
   */
  switch_us?: number;
  /** optional: the same for a copy that starts while a kernel runs on the compute stream; absent = switch_us */
  switch_under_compute_us?: number;
  /**
   * optional: added to a memory-stream copy batch to or from HBM for each doubling of the host-slot
   * distance (in blocks, within the layer) from the batch's previous block beyond SPREAD_FROM_BLOCKS
   * (sim/host-spread.ts): the copy engine pays more per copy the further apart a batch's host slots
   * are (timed in perf/device/host-span.mjs). A listed batch counts its blocks in the order listed; a
   * bulk stage of a layer's offloaded blocks and a layer's fetches count theirs per tier in block
   * order. Absent = 0
   */
  spread_us?: number;
  /**
   * optional: taken off a memory-stream copy batch into HBM for each copy whose host slot directly
   * follows the previous copy's: a block copied right after the block in the slot before it, where that
   * one is below the cache's full width (a quantized block does not fill its slot, so the next block is
   * a copy of its own; after a full-width block it joins that block's copy), or a move into HBM slots
   * that do not touch. The copy engine reads adjacent host slots faster than slots 2-4 apart, where
   * alpha_us was timed (perf/device/group-length.mjs). Counted where spread_us is; at most alpha_us a
   * copy, the batch's first copy not counted; taken off whether or not a kernel runs beside the copy.
   * Absent = 0
   */
  adjacent_us?: number;
  /**
   * optional: the bandwidth of copies beside the layers' GEMVs (gpu.copy_under_compute "gemv": their pace
   * there is alpha_under_compute_us plus their bytes at this rate); absent = GBps
   */
  GBps_under_compute?: number;
  /**
   * optional, with bulk_from_bytes: the pace of a large copy. A copy's bytes up to bulk_from_bytes move
   * at GBps, the rest at this rate (one copy of hundreds of MB runs faster than batches of small runs
   * imply); absent = GBps throughout
   */
  bulk_GBps?: number;
  /** optional, with bulk_GBps: the bytes of one copy priced at GBps before bulk_GBps takes over */
  bulk_from_bytes?: number;
  /**
   * optional, for file requests of a storage tier: the time of one request by its size, as
   * [request bytes, us] points ascending by bytes, measured with many such requests issued at once.
   * A request is its bytes rounded up to 4 KiB (the file tier's O_DIRECT unit); one smaller than the
   * last point's bytes takes the time interpolated between the points (the first point's time below
   * it), its bytes included; from the last point's bytes on, alpha_us + bytes / GBps. Absent =
   * alpha_us + bytes / GBps for every request.
   */
  request_us?: [number, number][];
  /**
   * optional, for file requests of a storage tier: the fixed time of one batch of requests handed to
   * the tier at once and joined, beyond its requests' times (the first request's latency, which a
   * batch of a few requests cannot hide behind others). The simulator adds it once per storage move
   * on the host's I/O stream over a route of this one link. Absent = 0.
   */
  batch_us?: number;
}

export interface LinkSpec {
  name: string;
  /** tier names at the two ends */
  a: string;
  b: string;
  a_to_b: LinkDirection;
  b_to_a: LinkDirection;
  /** transfers in flight per direction at once; more wait in FIFO order */
  copy_engines: number;
}

export interface GpuSpec {
  name: string;
  /** achieved HBM bandwidth seen by kernels (read bytes per second, 1e9) */
  hbm_bandwidth_GBps: number;
  /** achieved dense FP16 tensor throughput */
  fp16_TFLOPs: number;
  kernel_launch_us: number;
  /** optional: attention kernel roofline (launch + KV bytes / attention_GBps); default the generic one */
  attention_launch_us?: number;
  attention_GBps?: number;
  /**
   * optional: measured decode-attention time vs context tokens (FP16 KV, the layer's real sequence:
   * after a linear kernel, with the executor's marks), ascending in tokens; the simulator
   * interpolates it piecewise-linearly (the kernel's splits and waves make time non-linear in context)
   */
  attention_curve?: { tokens: number; us: number }[];
  /**
   * optional: the attention kernel alone vs context tokens, per kernel the executor dispatches: 'fp16',
   * 'int8', 'int4', 'int2' (one precision throughout the layer) and 'mixed' (per-block precisions from a
   * table). A layer whose blocks are not all FP16 takes attention_curve(tokens) plus
   * kernel(tokens) - fp16(tokens): the dequantizing kernels read fewer bytes but do more per byte, and the
   * mixed kernel branches per block, so their time is not the FP16 time at the bytes they read.
   */
  attention_kernels?: Partial<Record<AttentionKernel, { tokens: number; us: number }[]>>;
  /**
   * optional: the attention kernel's second, short wave (sim/attention-waves.ts). Where the dispatch's
   * split count asks for more blocks than fit on the GPU at once, a layer whose kernel follows the rule
   * (attention_waves.kernels) takes attention_curve(tokens) + us_per_chunk x the tail wave's chunks per
   * warp, plus its difference to FP16 as measured (both with their tail waves at the same contexts); a
   * kernel with a split of its own takes its difference to FP16 without FP16's tail wave (the
   * attention_kernels.fp16 points less it). attention_curve then holds the FP16 time without the wave.
   * Absent = the curve alone.
   */
  attention_waves?: AttentionWaves;
  /** optional: linear-layer (GEMV) kernel roofline; default the generic one */
  linear_launch_us?: number;
  linear_GBps?: number;
  /**
   * optional: how much a compute-stream kernel slows down while the memory stream copies into HBM
   * (h2d: the copy writes HBM) or out of it (d2h: reads HBM): a kernel runs on for fraction x the
   * time it shared with such copies. The decode kernels are HBM-bound, and the copies take a share
   * of HBM that costs them more than the copies' bytes (measured by hil calibrate; on the H100
   * lab/notes/HIL-NOTES.md). Absent = 0.
   */
  kernel_slowdown_under_h2d?: number;
  kernel_slowdown_under_d2h?: number;
  /**
   * optional: one block's quantize or dequantize kernel on the memory stream (launch included), with
   * the GPU otherwise idle and while kernels run on the compute stream. Where given, a change of bits
   * costs one such kernel per block and end that is not FP16 (two for INT -> INT, through FP16), as
   * the HIL executor converts blocks; absent = one kernel for a move's whole batch at the generic
   * kernel line (launch + bytes at HBM bandwidth).
   */
  convert_kernel_us?: number;
  convert_kernel_under_compute_us?: number;
  /**
   * optional: which memory-stream copies pay their direction's alpha_under_compute_us. 'start'
   * (default): a batch is priced when it starts, its copies that start within the compute stream's
   * busy stretch known then at alpha_under_compute_us (pro rata), the rest at alpha_us. 'gemv': a
   * batch runs at alpha_us and, when it ends, pays alpha_under_compute_us - alpha_us for each copy
   * that ran beside the layers' GEMVs (linear projections, LM head) in that time; copies beside
   * attention kernels pay nothing more (measured per op on an H200: lab/notes/HIL-NOTES.md). In both
   * modes a change of copy direction is priced when the copy starts: switch_under_compute_us while any
   * kernel runs on the compute stream, else switch_us.
   */
  copy_under_compute?: CopyUnderCompute;
  /**
   * optional: a fixed cost of each memory-stream copy batch into or out of HBM (the events around it,
   * its first copy's latency), added once per batch to its copies' alphas; absent = 0. `kvtier hil
   * calibrate` writes its per-batch fit's per-group cost (hil/calibrate/fit-copy-batches.ts); in a
   * profile calibrated without it, alpha_us carries that cost, spread over its batches' copies
   */
  copy_batch_us?: number;
  /**
   * optional: the host's time to issue one op to the GPU through the HIL executor's issue path
   * (the driver call and the executor's own code around it): a copy, an event record (timing marks),
   * a kernel launch (GEMV, rotation), a (de)quantization launch of one block (its arguments and the
   * launch; default issue_kernel_us), an attention launch (its kernel plan and launches; default
   * issue_kernel_us). Where given, the simulator keeps a host clock that issues every op in order
   * without waiting for the GPU (as the executor does), and an op starts no earlier than the host
   * issued it: where the host takes longer per op than the GPU, the GPU goes at the host's pace.
   * Absent = the host is never behind. `kvtier hil calibrate` writes them (hil/bench/issue-bench.ts).
   */
  issue_copy_us?: number;
  issue_record_us?: number;
  issue_kernel_us?: number;
  issue_convert_us?: number;
  issue_attention_us?: number;
  /**
   * optional, with the host clock: how many ops the host can have issued ahead of the GPU before an
   * issue waits for the GPU (the driver's launch queue). The simulator then holds the host clock, at
   * each step's start, to no more than that many ops ahead, and issues a step's memory-stream ops past
   * that many no earlier than the step's start (the stream waits behind the step barrier until then).
   * Absent = the host is never held back.
   */
  launch_queue_ops?: number;
  /**
   * optional, with the issue costs: the host's time to convert one block between widths in or between
   * host tiers, as the HIL executor does on its CPU after waiting for the memory stream to drain. Where
   * given, such a move is priced so (the memory stream's queue drained, then this per block on the host
   * clock) instead of as conversion kernels. Absent = conversion kernels on the memory stream (within a
   * tier), untimed between tiers.
   */
  host_convert_us?: number;
  /**
   * optional, with the issue costs: the host's time per file read batch beyond the batch's own time on
   * the file tier (handing the batch to the tier's I/O threads and taking up its completion), spent
   * when the host joins the batch. Absent = none.
   */
  file_batch_host_us?: number;
  /** memory held back from the KV cache for activations, workspace, CUDA context */
  reserved_GiB: number;
}

export interface HardwareProfile {
  schema: 'kvtier-hardware/v1';
  name: string;
  description: string;
  gpu: GpuSpec;
  /** tiers[0] must be the GPU's HBM (kind "hbm") */
  tiers: TierSpec[];
  links: LinkSpec[];
  /** field path -> source (paper, datasheet, measurement) for every number */
  sources: Record<string, string>;
}

/** the host's issue costs: where any is above 0 the simulator keeps a host clock (GpuSpec.issue_copy_us) */
export const ISSUE_COST_FIELDS = ['issue_copy_us', 'issue_record_us', 'issue_kernel_us', 'issue_convert_us', 'issue_attention_us'] as const;

/** whether a GPU's issue costs start the simulator's host clock (any of them above 0) */
export function hasHostClock(gpu: Partial<Record<(typeof ISSUE_COST_FIELDS)[number], unknown>>): boolean {
  return ISSUE_COST_FIELDS.some((k) => typeof gpu[k] === 'number' && (gpu[k] as number) > 0);
}

/** The FP16 attention kernel's split rule for the profile's model and GPU, and the price of its tail wave (sim/attention-waves.ts). */
export interface AttentionWaves {
  /** blocks the GPU runs at once: resident blocks per SM x SMs */
  slots: number;
  /** blocks per split: the KV heads (a block per head and split), or 1 where one block takes every head */
  blocks_per_split: number;
  /** warps that share a KV head's chunks within a block */
  warps_per_head: number;
  /** tokens per chunk */
  chunk_tokens: number;
  /** time per chunk each warp of the tail wave takes */
  us_per_chunk: number;
  /**
   * the kernels whose dispatch follows this rule (the same resident blocks and grid; 'fp16' among them):
   * their tail waves fall at the same contexts, and each is priced with FP16's us_per_chunk
   */
  kernels: AttentionKernel[];
}

export const GiB = 1024 ** 3;
export const GB = 1e9;

/**
 * the attention kernels the executor dispatches: one precision throughout a layer, or a per-block
 * table ('mixed'). Three more curves of the table kernel describe how it slows down with mixed
 * precisions along the table: 'mixed_interleaved' (INT2 and INT8 in turn: every 8-block window mixed),
 * 'mixed_sparse' (INT2 and INT8 in runs of 1 / MIXED_SPARSE_CHANGE_SHARE blocks), and with more
 * quantized precisions than two: 'mixed_kinds' ('mixed_sparse' with one INT4 and one INT3 block among
 * its runs: four quantized precisions), priced by its difference to 'mixed_sparse'. The simulator does
 * not dispatch them by name (roofline.ts attentionTimeUs).
 */
export const ATTENTION_KERNELS = ['fp16', 'int8', 'int4', 'int2', 'mixed', 'mixed_sparse', 'mixed_interleaved', 'mixed_kinds'] as const;
export type AttentionKernel = (typeof ATTENTION_KERNELS)[number];
export const MIXED_SPARSE_CHANGE_SHARE = 1 / 16;

/** How memory-stream copies beside compute kernels are priced (GpuSpec.copy_under_compute). */
export const COPY_UNDER_COMPUTE = ['start', 'gemv'] as const;
export type CopyUnderCompute = (typeof COPY_UNDER_COMPUTE)[number];
