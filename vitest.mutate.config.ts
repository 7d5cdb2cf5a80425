// The Vitest configuration Stryker runs (stryker.config.mjs, docs/mutation.md): only the
// fast in-process tests of the module set TWYLT_MUTATE names.
import { defineConfig } from 'vitest/config';
import { mutationSet } from './scripts/mutation-sets.mjs';

export default defineConfig({
  test: {
    include: mutationSet().tests,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
