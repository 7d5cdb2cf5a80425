// The module sets of mutation testing (docs/mutation.md): the source files Stryker mutates,
// and the fast, in-process test files that import that source (a test that runs the built
// dist/ or a spawned process sees no mutant). Read by stryker.config.mjs and
// vitest.mutate.config.ts; chosen by TWYLT_MUTATE (scripts/mutate.mjs sets it).
export const MUTATION_SETS = {
  oauth: {
    mutate: ['packages/twylt/src/server/oauth/*.ts', '!packages/twylt/src/server/oauth/index.ts'],
    tests: ['tests/server/oauth.test.ts', 'tests/server/oauth-rules.test.ts'],
  },
  access: {
    mutate: ['packages/twylt/src/server/access.ts'],
    tests: ['tests/server/access.test.ts', 'tests/server/access-rules.test.ts', 'tests/server/oauth.test.ts'],
  },
  observe: {
    mutate: ['packages/twylt/src/observe/registry.ts'],
    tests: ['tests/observe/registry.test.ts'],
  },
  sandbox: {
    mutate: ['packages/twylt/src/toolset/sandbox/*.ts', '!packages/twylt/src/toolset/sandbox/index.ts'],
    // paths.test.ts and proxy.test.ts import the source too (proxy.test.ts's end-to-end half runs dist/).
    tests: ['tests/sandbox/*.unit.test.ts', 'tests/sandbox/paths.test.ts', 'tests/sandbox/proxy.test.ts'],
    // proxy.test.ts's end-to-end half spawns bridges from dist/ (no mutant reaches them), as
    // root and as nobody, and nobody cannot run the Node.js Stryker runs on when it is the
    // runtime matrix's (under /root/.cache).
    testNamePattern: /^(?!.*end to end through twylt-mcp)/,
  },
  catalog: {
    mutate: [
      'packages/twylt/src/toolset/catalog/discover.ts',
      'packages/twylt/src/toolset/catalog/install.ts',
      'packages/twylt/src/toolset/catalog/sandboxed-install.ts',
      'packages/twylt/src/toolset/catalog/outside.ts',
      'packages/twylt/src/toolset/catalog/workspaces.ts',
    ],
    // install.test.ts is left out: it runs `twylt scan --install` (real pip and npm installs
    // over the network) from dist/, so it sees no mutant of src/ and cost minutes per mutant
    // (a first run estimated 9 hours). The rules it guards end to end are rows of
    // install.unit.test.ts, which imports the source.
    tests: ['tests/catalog/discover.test.ts', 'tests/catalog/*.unit.test.ts'],
  },
};

/** The set TWYLT_MUTATE names; throws naming the known ones. */
export function mutationSet(name = process.env.TWYLT_MUTATE) {
  const set = MUTATION_SETS[name ?? ''];
  if (!set) throw new Error(`TWYLT_MUTATE must name a module set: ${Object.keys(MUTATION_SETS).join(', ')} (got ${JSON.stringify(name)})`);
  return set;
}
