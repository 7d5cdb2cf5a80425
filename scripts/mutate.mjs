#!/usr/bin/env node
// Mutation testing (docs/mutation.md): StrykerJS over one module set, on a Node.js that
// Stryker 10 supports (22.18+ or 24.11+: this one when it is, else the runtime matrix's
// Node 24 from scripts/runtimes.mjs's cache).
//
//   npm run mutate -- SET [STRYKER_ARG...]     SET: oauth, access, observe, sandbox, catalog
//
// TWYLT_MUTATE_CONCURRENCY (default 2) bounds the test processes. Not part of CI's run.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { MUTATION_SETS } from './mutation-sets.mjs';
import { installedRuntime } from './runtimes.mjs';

/** Whether `version` (v22.18.0) is one Stryker 10 runs on. */
function supported(version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return (major === 22 && minor >= 18) || (major === 24 && minor >= 11) || major >= 25;
}

function nodeForStryker() {
  if (supported(process.version)) return process.execPath;
  for (const name of ['node24', 'node26', 'node22']) {
    const binary = installedRuntime(name);
    if (binary === undefined) continue;
    const version = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.trim();
    if (supported(version)) return binary;
  }
  return undefined;
}

const [set, ...rest] = process.argv.slice(2);
if (!set || !(set in MUTATION_SETS)) {
  process.stderr.write(`usage: npm run mutate -- SET [STRYKER_ARG...]\n  SET: ${Object.keys(MUTATION_SETS).join(', ')}\n`);
  process.exit(2);
}
const node = nodeForStryker();
if (node === undefined) {
  process.stderr.write(`mutate: Stryker 10 needs Node.js 22.18+ or 24.11+, and this is ${process.version}: node scripts/runtimes.mjs install node24\n`);
  process.exit(2);
}
const root = fileURLToPath(new URL('..', import.meta.url));
const stryker = fileURLToPath(new URL('../node_modules/@stryker-mutator/core/bin/stryker.js', import.meta.url));
const result = spawnSync(node, [stryker, 'run', 'stryker.config.mjs', ...rest], { cwd: root, stdio: 'inherit', env: { ...process.env, TWYLT_MUTATE: set } });
process.exit(result.status ?? 1);
