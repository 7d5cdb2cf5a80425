// Types of scripts/runtimes.mjs for the TypeScript that imports it (tests/support/runtimes.ts).
export interface RuntimePin {
  package: string;
  version: string;
  integrity: string;
  binary: string;
}
export const RUNTIME_NAMES: string[];
export function runtimesDir(env?: NodeJS.ProcessEnv): string;
export function runtimePin(name: string): RuntimePin;
export function runtimePath(name: string, env?: NodeJS.ProcessEnv): string;
export function installedRuntime(name: string, env?: NodeJS.ProcessEnv): string | undefined;
export function installRuntime(name: string, env?: NodeJS.ProcessEnv): { binary: string; fresh: boolean };
