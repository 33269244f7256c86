/**
 * The small traces shipped in traces/bundled/ for tests and short runs, and the exact generator inputs
 * that make them (traces/make-bundled.ts writes them; a test checks the files still match).
 * Llama-3-8B shape, 2k-token prompt, topk k = 32 to stay small (under 2 MB together).
 */
import type { GeneratorInput } from './generator-params.js';

export interface BundledTrace {
  file: string;
  description: string;
  input: GeneratorInput;
}

const LLAMA_3_8B_2K: GeneratorInput = {
  model: 'llama-3-8b',
  layers: 32,
  block_size: 16,
  prompt_tokens: 2048,
  encoding: 'topk',
  topk: 32,
  seed: 'kvtier-bundled-1',
};

export const BUNDLED_TRACES: readonly BundledTrace[] = [
  {
    file: 'llama-3-8b-2k-default.kvt',
    description: 'Llama-3-8B shape, 2048-token prompt, 128 decode steps, default preset (sinks, window, persistent heavy hitters)',
    input: { ...LLAMA_3_8B_2K, preset: 'default', steps: 128 },
  },
  {
    file: 'llama-3-8b-2k-needle.kvt',
    description: 'Llama-3-8B shape, 2048-token prompt, 64 decode steps; a needle at half depth retrieved by the upper 16 layers in steps 24-39',
    input: { ...LLAMA_3_8B_2K, preset: 'needle', steps: 64, needle: { depth: 0.5, from_step: 24, steps: 16, mass: 0.6 } },
  },
];
