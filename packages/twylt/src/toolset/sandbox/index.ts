/**
 * The kernel sandbox of tool processes (ADR 0032, docs/sandbox.md). Loaded only by a
 * consumer that asks for it: toolset/index.ts reaches it through a dynamic import.
 */
export { SandboxUnavailableError, prepareSandbox, type PrepareOptions, type PreparedSandbox } from './bwrap.js';
export { SandboxPolicyError } from './files.js';
export { SANDBOX_DEFAULTS, mergeSandboxPolicies, resolveSandboxPolicy, type ResolvedSandboxPolicy, type SandboxPolicy } from './policy.js';
