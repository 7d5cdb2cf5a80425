// Mutation testing with StrykerJS (docs/mutation.md): `npm run mutate -- SET`, never in CI's
// default run. The set (TWYLT_MUTATE) chooses what is mutated and which tests run.
import { mutationSet } from './scripts/mutation-sets.mjs';

const name = process.env.TWYLT_MUTATE;
const set = mutationSet(name);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  // Forks, not the runner's default threads: rows that change the process's effective uid
  // (process.seteuid, only in a main thread) run under Stryker too.
  vitest: { configFile: 'vitest.mutate.config.ts', related: false, pool: 'forks' },
  // Each mutant runs only the tests that cover it.
  coverageAnalysis: 'perTest',
  mutate: set.mutate,
  // The machine is shared: 2 test processes at most (TWYLT_MUTATE_CONCURRENCY=1 for fewer).
  concurrency: Number(process.env.TWYLT_MUTATE_CONCURRENCY ?? 2),
  timeoutMS: 10_000,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  // `npm run mutate -- SET --incremental` re-tests only the mutants whose code or tests changed
  // since the last run (the file is under reports/, not committed).
  incrementalFile: `reports/mutation/${name}.incremental.json`,
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  // What the tests neither import nor run stays out of the sandbox's copy.
  ignorePatterns: ['/build', '/bench', '/examples', '/reports', '/.ci'],
  thresholds: { high: 90, low: 80, break: null },
};
