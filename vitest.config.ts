import { defineConfig } from 'vitest/config';

/**
 * Test files that change state other files could see (prototypes patched, policies or hardware
 * registered, process streams or the environment replaced, modules mocked) or that are sensitive to
 * it: each runs with a fresh module registry. The others share their worker's modules, which saves
 * loading them again for every file. test/suite-isolation.test.ts fails when a file that changes such
 * state is missing here.
 */
export const ISOLATED = [
  'test/docs/add-a-policy.test.ts',
  'test/docs/docs-fresh.test.ts',
  'test/e2e/sweep.test.ts',
  'test/hil/calibrate.test.ts',
  'test/hil/compare.test.ts',
  'test/hil/run-exit.test.ts',
  'test/hil/validate.test.ts',
  'test/notebooks/notebooks.test.ts',
  'test/policies/contract.test.ts',
  'test/policies/definition-flags.test.ts',
  'test/policies/dpnc-refused.test.ts',
  'test/policies/dpnc-train-rate.test.ts',
  'test/policies/quest-bynorm.test.ts',
  'test/policies/quest-delta.test.ts',
  'test/policies/quest-full.test.ts',
  'test/policies/quest-lazy.test.ts',
  'test/policies/quest-move-blocks.test.ts',
  'test/policies/quest-state.test.ts',
  'test/policies/quest-unsel.test.ts',
  'test/policies/synapse-outlier-bound.test.ts',
  'test/policies/synapsevm-fast-paths.test.ts',
  'test/readiness/readiness-cli.test.ts',
  'test/serving/serve-cli.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'isolated', include: ISOLATED, isolate: true } },
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: ISOLATED, isolate: false } },
    ],
  },
});
