/**
 * The vitest configuration of a mutation run (stryker.config.mjs): the test files that exercise the
 * mutated core (simulator, policies, metrics, trace reader), none of the HIL, report or e2e files.
 * A surviving mutant runs every test that reaches it, so the slow generated-trace files (contract,
 * property, invariants, lazy compute: most of the suite's time) are left out unless
 * KVTIER_MUTATION_ALL=1; scores without them are lower bounds. Files run fast ones first, so that a
 * mutant a small test catches does not wait for a slow one (the runner stops at the first failure).
 */
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SLOW = /contract|property|invariants|lazy-compute/;

class FastFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const slow = (f: TestSpecification) => (SLOW.test(f.moduleId) ? 1 : 0);
    return [...files].sort((a, b) => slow(a) - slow(b) || a.moduleId.localeCompare(b.moduleId));
  }
}

export default defineConfig({
  test: {
    include: ['test/common/**/*.test.ts', 'test/sim/**/*.test.ts', 'test/policies/**/*.test.ts', 'test/traces/**/*.test.ts', 'test/quality/**/*.test.ts'],
    exclude: process.env.KVTIER_MUTATION_ALL === '1' ? [] : ['test/**/contract.test.ts', 'test/**/*.property.test.ts', 'test/**/policy-invariants.test.ts', 'test/**/lazy-compute.test.ts'],
    testTimeout: 60_000,
    sequence: { sequencer: FastFirst },
  },
});
