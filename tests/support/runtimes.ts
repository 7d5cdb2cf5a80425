/**
 * The extra runtimes of the test matrix (Node 22/24/26, Bun, Deno), as installed by
 * scripts/runtimes.mjs into its cache. Tests that need one skip with `runtimeMissing(name)`.
 */
import { installedRuntime, RUNTIME_NAMES } from '../../scripts/runtimes.mjs';

export { RUNTIME_NAMES };

/** Absolute path of the runtime's binary, or undefined when it is not installed. */
export function runtimeBinary(name: string): string | undefined {
  return installedRuntime(name);
}

/** Why a test that needs the runtime is skipped. */
export function runtimeMissing(name: string): string {
  return `runtime ${name} not installed: node scripts/runtimes.mjs install ${name}`;
}
