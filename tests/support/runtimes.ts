/**
 * The extra runtimes of the test matrix (Node 22/24/26, Bun, Deno), as installed by
 * scripts/runtimes.mjs into its cache. Tests that need one skip with `runtimeMissing(name)`.
 */
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
