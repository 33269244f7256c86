/**
 * Mutation testing of the simulator core (on demand: `npm run mutation`, never in CI).
 * One module at a time: `npm run mutation -- --mutate sim/kv-cache.ts`. Results: reports/mutation/.
 * Concurrency 1 and per-test coverage (each mutant runs only the tests that reach it); static
 * mutants (module-load code, which every test would have to run for) are left out.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'stryker.vitest.config.ts', related: false },
  coverageAnalysis: 'perTest',
  ignoreStatic: true,
  concurrency: 1,
  mutate: [
    'common/*.ts',
    'sim/engine.ts',
    'sim/flow-network.ts',
    'sim/kv-cache.ts',
    'sim/replay-driver.ts',
    'policies/*.ts',
    'sim/metrics/*.ts',
    'traces/trace-reader.ts',
  ],
  tempDirName: 'runs/stryker-tmp',
  cleanTempDir: true,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  thresholds: { high: 90, low: 80, break: null },
  timeoutMS: 5000,
};
