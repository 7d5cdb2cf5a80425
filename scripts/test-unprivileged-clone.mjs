#!/usr/bin/env node
// Issue 38: the tests that run as another user (nobody, through setpriv) must pass wherever the
// repository is cloned, a private folder included. This clones the repository (its committed
// HEAD) into a fresh `mktemp -d` folder (mode 0700, as private folders and most homes are),
// reuses this checkout's node_modules by a copy (no network), builds, and runs those tests there.
//
//   node scripts/test-unprivileged-clone.mjs [TEST_FILE...]
//
// The files default to every test that imports tests/support/unprivileged.ts, directly or
// through tests/sandbox/hostile-support.ts (the hostile suites run as nobody too). Bounded in time:
// each step has a time-out, and the clone is removed at the end whatever happened.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MINUTE = 60_000;

/** Run one step (argv, no shell), its output passed through; throws when it fails or times out. */
function step(what, argv, options) {
  const started = Date.now();
  const result = spawnSync(argv[0], argv.slice(1), { stdio: 'inherit', ...options });
  const seconds = Math.round((Date.now() - started) / 1000);
  if (result.error) throw new Error(`${what}: ${result.error.message} (after ${seconds} s)`);
  if (result.status !== 0) throw new Error(`${what}: exit ${result.status ?? result.signal} (after ${seconds} s)`);
  process.stderr.write(`unprivileged-clone: ${what} (${seconds} s)\n`);
}

function main(files) {
  const privateFolder = mkdtempSync(join(tmpdir(), 'twylt-private-'));
  const mode = statSync(privateFolder).mode & 0o777;
  if (mode !== 0o700) throw new Error(`${privateFolder} is ${mode.toString(8)}, not the private 0700 this check is about`);
  const clone = join(privateFolder, 'twylt');
  try {
    step('git clone into a 0700 folder', ['git', 'clone', '--quiet', '--no-hardlinks', ROOT, clone], { timeout: 5 * MINUTE });
    // The lockfile's packages as this checkout installed them; relative links (node_modules/twylt
    // -> ../packages/twylt) keep pointing into the clone.
    step('copy node_modules', ['cp', '-a', join(ROOT, 'node_modules'), join(clone, 'node_modules')], { timeout: 5 * MINUTE });
    step('copy packages/twylt/node_modules', ['cp', '-a', join(ROOT, 'packages/twylt/node_modules'), join(clone, 'packages/twylt/node_modules')], { timeout: MINUTE });
    step('npm run build', ['npm', 'run', '--silent', 'build'], { cwd: clone, timeout: 10 * MINUTE });
    if (files.length === 0) {
      const listed = spawnSync('git', ['grep', '-l', '-e', 'support/unprivileged.js', '-e', '/hostile-support.js', '--', 'tests/*.test.ts'], { cwd: clone, encoding: 'utf8' });
      files = listed.stdout.split('\n').filter(Boolean);
      if (files.length === 0) throw new Error('no test imports tests/support/unprivileged.ts: nothing to run');
    }
    process.stderr.write(`unprivileged-clone: ${clone} (in a 0700 folder): ${files.join(' ')}\n`);
    step('vitest run', [process.execPath, join(clone, 'node_modules/vitest/vitest.mjs'), 'run', ...files], { cwd: clone, timeout: 20 * MINUTE });
  } finally {
    rmSync(privateFolder, { recursive: true, force: true });
  }
}

try {
  main(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`unprivileged-clone: FAILED: ${error.message}\n`);
  process.exitCode = 1;
}
