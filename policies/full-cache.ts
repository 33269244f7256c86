/** Full cache: every block stays in HBM at FP16. The quality reference (recall 1 by construction). */
import type { PolicyDefinition } from './policy.js';

export const fullCache: PolicyDefinition = {
  name: 'full',
  description: 'Keep the whole KV cache in HBM at FP16; no budget (the quality reference). Runs at 100% of the KV size whatever budget is asked.',
  source: 'baseline',
  full: true,
  options: [],
  create: () => ({
    name: 'full',
    decide: () => undefined,
    observe: () => undefined,
  }),
};
