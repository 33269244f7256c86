/** Uniform INT8: every block quantized to 8 bits (group 128), nothing evicted — SmartKV's baseline. */
import type { PolicyDefinition } from './policy.js';
import { createSmartKv, smartKvOptions, type SmartKvOptions } from './smartkv.js';

export const uniformInt8: PolicyDefinition<SmartKvOptions> = {
  name: 'uniform-int8',
  description: 'Uniform INT8 KV (every block at 8 bits, requantized every 16 tokens as SmartKV does, overflow to DRAM streamed): the baseline SmartKV is compared against.',
  source: 'uniform group quantization (INT8, G = 128), e.g. FlexGen/KIVI baselines',
  options: smartKvOptions('uniform'),
  create: (o, setup) => createSmartKv('uniform-int8', o, setup),
};
