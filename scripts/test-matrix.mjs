#!/usr/bin/env node
// The runtime matrix (ADR 0022): the subset of the suite whose processes under test (tools,
// `twylt`, `twylt-mcp`, `twylt inspect`) run on each extra runtime, one Vitest run per
// runtime with TWYLT_TEST_RUNTIME=<name>. The full suite runs on the Node that runs Vitest.
//
//   node scripts/test-matrix.mjs [NAME...]     every installed runtime by default
//
// A runtime that is not installed is skipped, saying how to install it
// (node scripts/runtimes.mjs install); .ci/run installs them all first.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { installedRuntime, RUNTIME_NAMES, runtimePin } from './runtimes.mjs';

/** What each extra runtime runs: the tool runtime, the consumer commands, the bridge both ways. */
const MATRIX_TESTS = [
  // The tool runtime: transports, describe, errors and exit codes, input limits, guardrails.
  'tests/runtime/transports.test.ts',
  'tests/runtime/describe.test.ts',
  'tests/runtime/validation.test.ts',
  'tests/runtime/execution.test.ts',
  'tests/runtime/stdin-kinds.test.ts',
  'tests/runtime/exact-integers.test.ts',
  'tests/guardrails/transport.test.ts',
  'tests/guardrails/incidents.test.ts',
  'tests/guardrails/list-directory.test.ts',
  // The client through the `twylt` commands, and inspect's server.
  'tests/cli/cli.test.ts',
  'tests/cli/call-where.test.ts',
  'tests/inspect/server.test.ts',
  // twylt-mcp over stdio and --http.
  'tests/mcp/bridge.test.ts',
  'tests/mcp/http.test.ts',
];
// tests/runtimes/ (tools from source, the installed packages) runs in the main suite and
// covers every installed runtime itself.

function main(names) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
  const unknown = names.filter((name) => !RUNTIME_NAMES.includes(name));
  if (unknown.length > 0) {
    process.stderr.write(`test-matrix: unknown runtime ${unknown.join(', ')} (known: ${RUNTIME_NAMES.join(', ')})\n`);
    return 2;
  }
  const failed = [];
  for (const name of names.length > 0 ? names : RUNTIME_NAMES) {
    const { version } = runtimePin(name);
    if (installedRuntime(name) === undefined) {
      process.stderr.write(`test-matrix: ${name} ${version} skipped: not installed: node scripts/runtimes.mjs install ${name}\n`);
      continue;
    }
    process.stderr.write(`test-matrix: ${name} ${version}\n`);
    const started = Date.now();
    const result = spawnSync(process.execPath, [vitest, 'run', ...MATRIX_TESTS], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, TWYLT_TEST_RUNTIME: name },
    });
    const seconds = Math.round((Date.now() - started) / 1000);
    process.stderr.write(`test-matrix: ${name} ${version} ${result.status === 0 ? 'passed' : 'FAILED'} in ${seconds} s\n`);
    if (result.status !== 0) failed.push(name);
  }
  if (failed.length > 0) process.stderr.write(`test-matrix: failed on ${failed.join(', ')}\n`);
  return failed.length === 0 ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
