// The Vitest configuration Stryker runs (stryker.config.mjs, docs/mutation.md): only the
// fast in-process tests of the module set TWYLT_MUTATE names.
import { defineConfig } from 'vitest/config';
import { mutationSet } from './scripts/mutation-sets.mjs';

const set = mutationSet();

export default defineConfig({
  test: {
    include: set.tests,
    // A set may leave out tests that only run dist/ or spawned processes.
    ...(set.testNamePattern ? { testNamePattern: set.testNamePattern } : {}),
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
