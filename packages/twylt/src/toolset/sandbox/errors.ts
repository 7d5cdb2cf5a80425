/**
 * The sandbox's errors, light: a consumer tells them by their class (instanceof) without
 * loading the driver (bwrap.ts), which only a consumer given --sandbox loads.
 */

/** The sandbox cannot work on this machine, and tools must not run without it. */
export class SandboxUnavailableError extends Error {
  constructor(message: string) {
    super(`${message}; refusing to run tools unsandboxed (docs/sandbox.md)`);
    this.name = 'SandboxUnavailableError';
  }
}

/** A policy with a mistake (sandboxPolicyIssues), or one that would expose what it must not (the home folder, `/`). */
export class SandboxPolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SandboxPolicyError';
  }
}
