/** The `hardware-presets`, `profile-fields` and `model-presets` sections, from the preset registries and the profile validator. */
import { listHardware, loadHardware } from '../../sim/hardware/load-profile.js';
import { GPU_FIELDS, GPU_OPTIONAL_FIELDS, LINK_FIELDS, PROFILE_SCHEMA, TIER_FIELDS } from '../../sim/hardware/validate-profile.js';
import { getModel, listModels } from '../../sim/models/load-model.js';
import { kvBytes } from '../../sim/models/model.js';
import { GENERATED_BY, table } from './markdown.js';

function gib(x: number): string {
  if (x >= 1024) return `${+(x / 1024).toFixed(2)} TiB`;
  return `${+x.toFixed(2)} GiB`;
}

export function hardwarePresetsSection(): string {
  const rows = listHardware().map(({ name, description }) => {
    const p = loadHardware(name);
    const tiers = p.tiers.map((t) => `${t.name} ${gib(t.capacity_GiB)}`).join(', ');
    return [`\`${name}\``, p.gpu.name, tiers, description];
  });
  return [GENERATED_BY('the preset registry (sim/hardware/preset-registry.ts, presets/machines.json; `kvtier hardware`)'), '', table(['preset', 'GPU', 'tiers (capacity)', 'description'], rows)].join('\n');
}

/** The unit a profile field's name carries (kvtier-hardware/v1 puts units in field names). */
export function unitOf(field: string): string {
  if (field === 'request_us') return '[bytes, µs] pairs';
  if (field.endsWith('_GBps') || field === 'GBps' || field.startsWith('GBps_')) return 'GB/s (10^9 bytes/s)';
  if (field.endsWith('_us')) return 'µs';
  if (field.endsWith('_GiB')) return 'GiB (2^30 bytes)';
  if (field.endsWith('_bytes')) return 'bytes';
  if (field.endsWith('_TFLOPs')) return 'TFLOP/s (10^12 FLOP/s)';
  return '';
}

/** What each profile field means; a field the validator knows without an entry here is an error. */
const PROFILE_FIELD_MEANING: Record<string, Record<string, string>> = {
  gpu: {
    name: 'the GPU\'s name, for reports',
    hbm_bandwidth_GBps: 'HBM bandwidth kernels achieve (bytes read per second): the generic roofline\'s memory term',
    fp16_TFLOPs: 'dense FP16 tensor throughput kernels achieve: the roofline\'s compute term',
    kernel_launch_us: 'fixed cost of one kernel launch',
    reserved_GiB: 'HBM held back from the KV cache (activations, workspace, CUDA context)',
    attention_launch_us: 'optional: attention kernel roofline, fixed part (default: the generic roofline)',
    attention_GBps: 'optional: attention kernel roofline, bytes of KV read per second',
    attention_curve: 'optional: measured decode-attention time against context, `[{ "tokens": n, "us": t }, …]` ascending, FP16 KV; interpolated piecewise-linearly',
    attention_waves: 'optional: the attention kernel\'s second, short wave, `{ "slots": resident blocks x SMs, "blocks_per_split": n, "warps_per_head": n, "chunk_tokens": 16, "us_per_chunk": t, "kernels": ["fp16", …] }`: where the dispatch\'s split count asks for more blocks than the slots, a layer whose kernel is in `kernels` (those whose dispatch follows the rule, FP16 among them) takes `us_per_chunk` x the chunks per warp of that wave more than `attention_curve` plus its difference to FP16 as measured; another kernel takes its difference to FP16 less FP16\'s tail at FP16\'s points; `attention_curve` then holds the FP16 time without the wave (`sim/attention-waves.ts`); needs `attention_curve`',
    attention_kernels: 'optional: each attention kernel against context as the executor runs it (calibrated in layer chains, minus the layer GEMV), `{ "fp16": [{ "tokens": n, "us": t }, …], "int8": …, "int4": …, "int2": …, "mixed": … }`; a layer whose attended blocks are not all FP16 takes `attention_curve` plus its kernel\'s difference to FP16 (one precision throughout: that precision\'s kernel; several: the per-block table kernel, priced by its make-up: INT8 and INT2 blocks at the `int8` and `int2` curves, FP16 and INT4 blocks at `mixed`, the calibration\'s table of both); `mixed_interleaved` (INT2 and INT8 in turn) times the table kernel with every 8-block window mixed, and a `mixed` layer adds that slowdown times its share of 8-block windows (one starting every 4 blocks) holding more than one precision; `mixed_sparse` (INT2 and INT8 in runs of 16 blocks) is the base of `mixed_kinds`; `mixed_kinds` (the `mixed_sparse` runs with one INT4 and one INT3 block) times the table with four quantized precisions, and a `mixed` layer adds half its difference to `mixed_sparse` for each quantized precision beyond two among its blocks',
    linear_launch_us: 'optional: linear-layer (GEMV) kernel roofline, fixed part',
    linear_GBps: 'optional: linear-layer kernel roofline, weight bytes read per second',
    kernel_slowdown_under_h2d: 'optional, fraction: a compute kernel runs on for this fraction of the time it shares with copies into HBM (default 0)',
    kernel_slowdown_under_d2h: 'optional, fraction: the same for copies out of HBM (default 0)',
    convert_kernel_us: 'optional: one block\'s quantize or dequantize kernel on the memory stream, GPU otherwise idle; where given, a change of bits costs one per block and non-FP16 end (default: one kernel per batch on the generic kernel line)',
    convert_kernel_under_compute_us: 'optional: the same while kernels run on the compute stream (default convert_kernel_us)',
    copy_under_compute: 'optional: which memory-stream copies pay `alpha_under_compute_us`: `"start"` (default) the copies of a batch that start within the compute stream\'s busy stretch known when the batch starts; `"gemv"` the copies that ran beside the layers\' GEMVs, settled when the batch ends: while a GEMV runs a copy takes `alpha_under_compute_us` plus its bytes at `GBps_under_compute`, so a batch inside a GEMV pays the difference per copy and a long batch with a GEMV inside it pays for the copies that fit in the GEMV at that pace (copies beside attention pay `alpha_us`); `kvtier hil calibrate` writes `"gemv"`, the pricing its per-batch copy fit goes with',
    copy_batch_us: 'optional: a fixed cost added once to each memory-stream copy batch into or out of HBM (the events around it, its first copy\'s latency); prefetches of listed blocks issued in a row for one layer and tier are one stage, so one batch (default 0); `kvtier hil calibrate` writes its per-group term, and in a profile calibrated without it `alpha_us` carries that cost spread over the copies',
    issue_copy_us: 'optional: the host\'s time to issue one copy through the HIL executor; where any `issue_*_us` is given the simulator keeps a host clock that issues every op in order without waiting for the GPU, and an op starts no earlier than issued ([simulator.md](simulator.md)); absent: the host is never behind. `kvtier hil calibrate` writes them',
    issue_record_us: 'optional: the same for one event record (the timing marks around a layer and a memory-stream batch)',
    issue_kernel_us: 'optional: the same for one kernel launch (GEMV, rotation)',
    issue_convert_us: 'optional: the same for one block\'s (de)quantization launch (its arguments and the launch; default `issue_kernel_us`)',
    issue_attention_us: 'optional: the same for one attention launch (its kernel plan and launches; default `issue_kernel_us`)',
    launch_queue_ops: 'optional, with the issue costs: how many ops the host can issue ahead of the GPU before an issue waits (the driver\'s launch queue); the host clock is held to that lead at each step\'s start, and a step\'s memory-stream ops past that many are issued no earlier than the step\'s start',
    file_batch_host_us: 'optional, with the issue costs: the host\'s time per batch of file reads it joins, beyond the batch\'s own time on the file tier (handing it to the tier\'s I/O threads, taking up its completion); the host clock takes it after each joined read batch ([simulator.md](simulator.md)); `kvtier hil calibrate` writes the median over its file read batches (default 0)',
    host_convert_us: 'optional, with the issue costs: the host\'s time to convert one block between widths in or between host tiers, as the HIL executor does on its CPU after waiting for the memory stream to drain; where given, such a move costs a storage source\'s reads, that drain and this per block on the host clock, then a storage destination\'s writes (default: conversion kernels on the memory stream within a tier, the conversion untimed between tiers)',
  },
  tier: {
    name: 'unique name used by links and policy options (`hbm`, `dram`, `cxl`, `nvme`, `hdd`, …)',
    kind: 'one of `hbm`, `dram`, `cxl`, `nvme`, `hdd`, `remote`; `tiers[0]` must be the GPU\'s HBM',
    capacity_GiB: 'capacity',
    read_GBps: 'sustained read bandwidth of the device itself',
    write_GBps: 'sustained write bandwidth of the device itself',
    read_latency_us: 'access latency added once per transfer that reads the tier',
    write_latency_us: 'access latency added once per transfer that writes the tier',
  },
  link: {
    name: 'the link\'s name, used in `bytes` keys of the outputs (`pcie:dram->hbm`)',
    a: 'tier name at one end',
    b: 'tier name at the other end',
    a_to_b: 'direction a → b: `{ "alpha_us", "GBps", "alpha_under_compute_us"?, "GBps_under_compute"?, "switch_us"?, "switch_under_compute_us"?, "spread_us"?, "adjacent_us"?, "bulk_GBps"?, "bulk_from_bytes"?, "request_us"?, "batch_us"? }`',
    b_to_a: 'direction b → a, the same fields',
    copy_engines: 'transfers in flight per direction at once (integer >= 1); more wait in FIFO order',
  },
  direction: {
    alpha_us: 'fixed cost of one transfer: time = alpha_us + bytes / GBps',
    GBps: 'bandwidth of one direction; transfers in flight at once share it',
    alpha_under_compute_us: 'optional: alpha of a transfer started while a kernel runs on the compute stream (default alpha_us)',
    switch_us: 'optional: added to a copy in this direction on the memory stream when the stream\'s previous copy went the other way (default 0)',
    switch_under_compute_us: 'optional: the same for a copy that starts while a kernel runs on the compute stream (default switch_us)',
    spread_us:
      "optional: added to a memory-stream copy batch to or from HBM for each doubling of the host-slot distance (in blocks) between consecutive blocks beyond 3 (`SPREAD_FROM_BLOCKS`): a listed batch counts its blocks in the order listed (a stage that continues the previous one measures from that stage's last block), a bulk stage of a layer's offloaded blocks (those not staged yet) and a layer's fetches count theirs per tier in block order, as the HIL copies them; the copy engine pays more per copy the further apart a batch's host slots are (`perf/device/host-span.mjs`). `kvtier hil calibrate` writes it on CUDA: the least-squares slope, through the point of fewest doublings, of single-block copies' time against those doublings, with host slots drawn from 48, 512 and 2048 per layer, the mean of its slopes beside the layer GEMV and idle (default 0)",
    adjacent_us:
      "optional: taken off a memory-stream copy batch into HBM for each copy whose host slot directly follows the previous copy's: a block copied right after the block in the slot before it where that one is below the cache's full width (a quantized block does not fill its FP16-sized slot, so the next block is a copy of its own; after a full-width block it joins that copy), or a move into HBM slots that do not touch; counted where `spread_us` counts blocks, at most `alpha_us` a copy, the batch's first copy not counted, whether or not a kernel runs beside it; the copy engine reads adjacent host slots faster than slots 2-4 apart, where `alpha_us` is timed (`perf/device/group-length.mjs`). `kvtier hil calibrate` writes it on CUDA from an H2D batch of the largest quantized block size from adjacent host slots, against the batch of the same size from slots 2-4 apart, with the GPU otherwise idle (default 0)",
    GBps_under_compute: 'optional: the bandwidth of a copy beside the layers\' GEMVs under `gpu.copy_under_compute` `"gemv"` (default GBps)',
    bulk_GBps: 'optional, with `bulk_from_bytes`: the pace of a large copy; a copy\'s bytes beyond `bulk_from_bytes` move at this rate, the first `bulk_from_bytes` at `GBps` (a single copy of hundreds of MB runs faster than batches of small runs imply; `kvtier hil calibrate` measures it with copies of 256 MiB). It applies on a route of one link whose tier ports are at least as fast as the link and its bulk pace',
    bulk_from_bytes: 'optional, with `bulk_GBps`: where a copy\'s bulk pace starts (`kvtier hil calibrate` writes the longest run of its batch fit)',
    request_us: 'optional, for file requests of a storage tier: the time of one request by its size, ascending by bytes, measured with many such requests issued at once. A request is its bytes rounded up to 4 KiB; one smaller than the last point\'s bytes takes the time interpolated between the points (the first point\'s time below it), its bytes included; from the last point on, `alpha_us` + bytes / `GBps`. `kvtier hil calibrate` writes it for the NVMe read direction: the model\'s INT8, INT4 and INT2 block sizes, then the FP16 block at its read fit',
    batch_us: "optional, for file requests of a storage tier: the fixed time of one batch of requests handed to the tier at once and joined, beyond its requests' times (the first request's latency, which a batch of a few requests cannot hide behind others); the simulator adds it once per storage move over a route of this one link (as `request_us`). `kvtier hil calibrate` writes it for the NVMe read direction: the fixed term of its read fit, time = `batch_us` + requests × `alpha_us` + bytes / `GBps` per batch, relative-error least squares over the executor-pattern batches (layer batches and batches of a few single blocks, which alone tell the fixed time from the requests' alpha)",
  },
};

function fieldRows(group: string, fields: readonly string[], optional: readonly string[] = []): string[][] {
  const meaning = PROFILE_FIELD_MEANING[group];
  const all = [...fields, ...optional];
  const stale = Object.keys(meaning).filter((k) => !all.includes(k));
  if (stale.length) throw new Error(`docs/generate.ts describes ${group} fields that sim/hardware/validate-profile.ts no longer knows: ${stale.join(', ')}`);
  return all.map((f) => {
    if (!meaning[f]) throw new Error(`sim/hardware/validate-profile.ts knows the ${group} field "${f}", which docs/generate.ts does not describe: add it there`);
    return [`\`${f}\``, unitOf(f), optional.includes(f) ? 'no' : 'yes', meaning[f]];
  });
}

/** The link-direction fields: those the shipped presets use, and the optional one. */
function directionFields(): string[] {
  const seen = new Set<string>();
  for (const { name } of listHardware()) for (const l of loadHardware(name).links) for (const d of [l.a_to_b, l.b_to_a]) for (const k of Object.keys(d)) seen.add(k);
  return [...seen];
}

export function profileFieldsSection(): string {
  const head = ['field', 'unit', 'required', 'meaning'];
  const used = directionFields();
  const direction = Object.keys(PROFILE_FIELD_MEANING.direction);
  const unknown = used.filter((k) => !direction.includes(k));
  if (unknown.length) throw new Error(`a preset's link direction has fields docs/generate.ts does not describe: ${unknown.join(', ')}`);
  return [
    GENERATED_BY(`the field lists of sim/hardware/validate-profile.ts (schema \`${PROFILE_SCHEMA}\`)`),
    '',
    '`gpu`:',
    '',
    table(head, fieldRows('gpu', GPU_FIELDS, GPU_OPTIONAL_FIELDS)),
    '',
    '`tiers[]`:',
    '',
    table(head, fieldRows('tier', TIER_FIELDS)),
    '',
    '`links[]`:',
    '',
    table(head, fieldRows('link', LINK_FIELDS)),
    '',
    '`links[].a_to_b`, `links[].b_to_a`:',
    '',
    table(head, fieldRows('direction', ['alpha_us', 'GBps'], ['alpha_under_compute_us', 'GBps_under_compute', 'bulk_GBps', 'bulk_from_bytes', 'switch_us', 'switch_under_compute_us', 'spread_us', 'adjacent_us', 'request_us', 'batch_us'])),
  ].join('\n');
}

export function modelPresetsSection(): string {
  const rows = listModels().map(({ name, description }) => {
    const m = getModel(name);
    const perToken = m.layers * kvBytes(m, 1, 16);
    return [`\`${name}\``, String(m.layers), (perToken / 1024).toFixed(1), description];
  });
  return [GENERATED_BY('the model registry (sim/models/model-registry.ts; `kvtier models`)'), '', table(['model', 'layers', 'KV KiB/token (FP16)', 'description'], rows)].join('\n');
}
