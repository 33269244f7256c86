/** Hand-made request traces for the serving tests. */
import type { ServingRequest } from '../../traces/requests/request.js';

/** Requests from [arrival_ms, input, output, hash_ids] rows, numbered in order. */
export function requests(rows: [number, number, number, number[]][]): ServingRequest[] {
  return rows.map(([arrival_ms, input_tokens, output_tokens, hash_ids], id) => ({ id, line: id + 1, arrival_ms, input_tokens, output_tokens, hash_ids }));
}

import type { HardwareProfile } from '../../sim/hardware/profile.js';
import type { ModelSpec } from '../../sim/models/model.js';
import type { ServingTier } from '../../serving/serving-tiers.js';

/**
 * A toy model and GPU with round numbers: one layer of 4 MB weights, 4 bytes of KV per token, 4 GB/s
 * of HBM bandwidth and so much compute that every iteration is memory bound:
 * iteration time = 1000 us + 0.001 us x (KV tokens read + tokens processed).
 */
export const toyModel: ModelSpec = {
  name: 'toy',
  description: 'toy model for hand-computed timelines',
  layers: 1,
  hidden: 1,
  q_heads: 1,
  kv_heads: 1,
  head_dim: 1,
  attention: 'mha',
  weight_bytes_per_layer: 4e6,
  flops_per_token_per_layer: 0,
  other_weight_bytes: 0,
  sources: {},
};

/** HBM and DRAM joined by a 1 GB/s link: D2H alpha 3 us, H2D alpha 5 us (16 bytes: +0.016 us). */
export const toyHardware: HardwareProfile = {
  schema: 'kvtier-hardware/v1',
  name: 'toy-hw',
  description: 'toy machine for hand-computed timelines',
  gpu: { name: 'toy-gpu', hbm_bandwidth_GBps: 4, fp16_TFLOPs: 1e6, kernel_launch_us: 0, reserved_GiB: 0 },
  tiers: [
    { name: 'hbm', kind: 'hbm', capacity_GiB: 1, read_GBps: 4, write_GBps: 4, read_latency_us: 0, write_latency_us: 0 },
    { name: 'dram', kind: 'dram', capacity_GiB: 1, read_GBps: 100, write_GBps: 100, read_latency_us: 0, write_latency_us: 0 },
  ],
  links: [{ name: 'pcie', a: 'hbm', b: 'dram', a_to_b: { alpha_us: 3, GBps: 1 }, b_to_a: { alpha_us: 5, GBps: 1 }, copy_engines: 1 }],
  sources: {},
};

export function toyTiers(hbm: number, dram: number): ServingTier[] {
  return [
    { name: 'hbm', kind: 'hbm', capacityTokens: hbm, profileTokens: hbm },
    { name: 'dram', kind: 'dram', capacityTokens: dram, profileTokens: dram },
  ];
}
