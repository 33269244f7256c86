/**
 * The vitest configuration of a mutation run (stryker.config.mjs): the test files that exercise the
 * mutated core (simulator, policies, metrics, trace reader), none of the HIL, report or e2e files.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/sim/**/*.test.ts', 'test/policies/**/*.test.ts', 'test/traces/**/*.test.ts', 'test/quality/**/*.test.ts'],
    testTimeout: 60_000,
  },
});
