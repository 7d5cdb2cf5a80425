/**
 * The runtimes of the test matrix (Node 22/24/26, Bun, Deno), as installed by
 * scripts/runtimes.mjs into its cache, and the one switch that moves the processes under test
 * onto one of them: TWYLT_TEST_RUNTIME=<name> (scripts/test-matrix.mjs sets it). The helpers
 * that spawn tools and commands (process.ts, twylt-cli.ts, mcp.ts, mcp-http.ts...) start them
 * with `JS_RUNTIME` and `TS_RUNTIME`; test files never ask which runtime it is.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { installedRuntime, RUNTIME_NAMES, runtimePin } from '../../scripts/runtimes.mjs';

export { RUNTIME_NAMES };

/** Absolute path of the runtime's binary, or undefined when it is not installed. */
export function runtimeBinary(name: string): string | undefined {
  return installedRuntime(name);
}

/** Why a test that needs the runtime is skipped. */
export function runtimeMissing(name: string): string {
  return `runtime ${name} not installed: node scripts/runtimes.mjs install ${name}`;
}

/** argv that runs a JavaScript or TypeScript file on the named runtime (Deno needs `run -A`). */
export function runtimeArgv(name: string): string[] {
  const binary = runtimeBinary(name);
  if (binary === undefined) throw new Error(runtimeMissing(name));
  return name === 'deno' ? [binary, 'run', '-A'] : [binary];
}

/** The runtime the processes under test run on; undefined: the Node that runs the tests. */
export const TEST_RUNTIME: string | undefined = process.env.TWYLT_TEST_RUNTIME || undefined;

/** argv that runs a JavaScript file (a built tool, a `twylt` command) on the runtime under test. */
export const JS_RUNTIME: readonly string[] = TEST_RUNTIME === undefined ? [process.execPath] : runtimeArgv(TEST_RUNTIME);

/**
 * argv that runs a TypeScript source file on the runtime under test: natively where the
 * runtime strips types (Node 22.18+, Bun, Deno), through tsx on the Node that runs the tests.
 */
export const TS_RUNTIME: readonly string[] = TEST_RUNTIME === undefined ? [process.execPath, '--import', import.meta.resolve('tsx')] : JS_RUNTIME;

/** What `code` prints on the runtime under test (a constant that differs between engines, say). */
export function evalOnTestRuntime(code: string): string {
  const [binary] = JS_RUNTIME;
  return execFileSync(binary!, [TEST_RUNTIME === 'deno' ? 'eval' : '-e', code], { encoding: 'utf8' }).trim();
}

/** What a runtime is known not to do, and why: a test that needs it skips with this reason. */
const LIMITS: Record<string, Record<string, string>> = {
  deno: {
    'wait on a non-blocking stdin': 'Deno retries read(2) in a busy loop on a non-blocking stdin (it reads it right, but never waits where /proc shows it)',
  },
};

/** Why the runtime under test cannot do `what`, or undefined when it can. */
export function runtimeCannot(what: string): string | undefined {
  const reason = TEST_RUNTIME === undefined ? undefined : LIMITS[TEST_RUNTIME]?.[what];
  return reason === undefined ? undefined : `${TEST_RUNTIME}: ${reason}`;
}

/**
 * Why `deno compile` cannot make a working executable here, or undefined when it can: it
 * builds on Deno's runtime binary (denort), which it downloads from Deno's own servers (not
 * a registry package) unless DENORT_BIN names one or an earlier download is in its cache.
 */
export function denortMissing(): string | undefined {
  if (process.env.DENORT_BIN) return undefined;
  const denoDir = process.env.DENO_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'deno');
  const cached = join(denoDir, 'dl', 'release', `v${runtimePin('deno').version}`, 'denort-x86_64-unknown-linux-gnu.zip');
  if (existsSync(cached)) return undefined;
  return `deno compile needs denort ${runtimePin('deno').version}: set DENORT_BIN, or let deno download it once (no registry package has it)`;
}
