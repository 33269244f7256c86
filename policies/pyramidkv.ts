/**
 * PyramidKV (Cai et al., "PyramidKV: Dynamic KV Cache Compression based on Pyramidal Information
 * Funneling", 2024): SnapKV's selection (observation window votes, pooled, top blocks kept) with a
 * per-layer budget that falls linearly with depth: with m layers and a mean prompt budget k,
 *   k_{m−1} = k / β,  k_0 = 2k − k_{m−1},  k_l = k_0 − (k_0 − k_{m−1}) · l / (m − 1)   (β = 20),
 * so the total equals m·k. Every layer keeps at least its observation window. Budgets are whole blocks
 * (largest-remainder rounding, so the total is exact), and the window minimum is taken back from the
 * lowest (largest) layers. Same block-level approximations as snapkv.ts.
 */
import type { PolicyDefinition } from './policy.js';
import { decodeReserveBlocks } from './snap-select.js';
import { snapCompressor } from './snapkv.js';

interface Options extends Record<string, unknown> {
  beta: number;
  window_tokens: number;
  kernel: number;
}

/** Whole-block prompt budgets per layer: the pyramid of mean `mean`, each at least `minBlocks`. */
export function pyramidBudgets(layers: number, mean: number, beta: number, minBlocks: number): number[] {
  const kLast = mean / beta;
  const k0 = 2 * mean - kLast;
  const real = Array.from({ length: layers }, (_, l) => (layers === 1 ? mean : k0 - ((k0 - kLast) * l) / (layers - 1)));
  const total = Math.round(mean * layers);
  const out = real.map(Math.floor);
  let left = total - out.reduce((a, b) => a + b, 0);
  const byRem = real.map((r, l) => [r - Math.floor(r), l] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (let i = 0; left > 0 && i < byRem.length; i++, left--) out[byRem[i][1]]++;
  // the window minimum, paid for by the largest layers
  let debt = 0;
  for (let l = 0; l < layers; l++) {
    if (out[l] < minBlocks) {
      debt += minBlocks - out[l];
      out[l] = minBlocks;
    }
  }
  for (let l = 0; debt > 0 && l < layers; l++) {
    const give = Math.min(debt, Math.max(0, out[l] - minBlocks));
    out[l] -= give;
    debt -= give;
  }
  return out;
}

export const pyramidKv: PolicyDefinition<Options> = {
  name: 'pyramidkv',
  description:
    'PyramidKV: SnapKV selection (observation window vote per KV-head group, avg-pool kernel 5, union of the groups\' top blocks) with per-layer prompt budgets falling linearly with depth (k_last = k/beta, k_0 = 2k - k_last, beta = 20); generated tokens kept; the rest dropped.',
  source: 'Cai et al., PyramidKV: Dynamic KV Cache Compression based on Pyramidal Information Funneling, 2024 (beta = 20, w = 32, kernel 5)',
  options: [
    { name: 'beta', type: 'number', default: 20, min: 1, description: 'the top layer keeps 1/beta of the mean budget' },
    { name: 'window_tokens', type: 'integer', default: 32, min: 1, description: 'observation window (last prompt tokens), kept in every layer' },
    { name: 'kernel', type: 'integer', default: 5, min: 1, description: 'avg-pooling kernel over tokens' },
  ],
  create(o, setup) {
    const B = setup.blockSize;
    const reserve = decodeReserveBlocks(setup.header.prompt_tokens, setup.header.steps, B);
    const windowBlocks = Math.min(Math.ceil(o.window_tokens / B), Math.ceil(setup.header.prompt_tokens / B));
    const meanPrompt = Math.max(windowBlocks, setup.budgetBlocks - reserve);
    const prompt = pyramidBudgets(setup.layers, meanPrompt, o.beta, windowBlocks);
    return snapCompressor('pyramidkv', o, setup, (l) => prompt[l] + reserve);
  },
};
