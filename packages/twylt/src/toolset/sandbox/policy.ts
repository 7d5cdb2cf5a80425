/**
 * The sandbox policy a person reads and writes (ADR 0032): what a tool may read and write
 * beyond its own code and workspace, which hosts it may reach through its proxy in the
 * consumer, which variables of the consumer it gets, and its limits. Plain data; the driver
 * (bwrap.ts) turns it into a kernel sandbox.
 */

export interface SandboxPolicy {
  /** Extra files or folders the tool may read (absolute, or relative to the consumer's cwd). */
  allowRead?: string[];
  /** Extra files or folders the tool may read and write. */
  allowWrite?: string[];
  /** Hosts the tool may reach through the filtering proxy: `host`, `host:port`, `*.domain`. */
  allowNet?: string[];
  /** Variables of the consumer's environment passed on by name (none by default). */
  allowEnv?: string[];
  /** Memory of the call's processes together, in MiB (0: no limit). */
  memoryMb?: number;
  /** Processes and threads of the call together (0: no limit). */
  processes?: number;
  /** CPU seconds of each process of the call (0: no limit). */
  cpuSeconds?: number;
}

/** The limits every sandboxed call gets unless told otherwise. */
export const SANDBOX_DEFAULTS = Object.freeze({
  /** A Node.js or Python tool needs 30 to 60 MB; 1 GiB leaves room for real work. */
  memoryMb: 1024,
  /** Tasks, threads included: one Node.js process has about ten. */
  processes: 256,
  /** Twice the default call time-out (30 s) of one busy core. */
  cpuSeconds: 60,
});

/** A policy with every field set. */
export type ResolvedSandboxPolicy = Required<SandboxPolicy>;

/** Fill in the defaults; `true` is the default policy. */
export function resolveSandboxPolicy(policy: SandboxPolicy | true): ResolvedSandboxPolicy {
  const given = policy === true ? {} : policy;
  return {
    allowRead: [...(given.allowRead ?? [])],
    allowWrite: [...(given.allowWrite ?? [])],
    allowNet: [...(given.allowNet ?? [])],
    allowEnv: [...(given.allowEnv ?? [])],
    memoryMb: given.memoryMb ?? SANDBOX_DEFAULTS.memoryMb,
    processes: given.processes ?? SANDBOX_DEFAULTS.processes,
    cpuSeconds: given.cpuSeconds ?? SANDBOX_DEFAULTS.cpuSeconds,
  };
}

/** Two policies merged: an entry's own over the consumer's default (lists are joined). */
export function mergeSandboxPolicies(base: SandboxPolicy, over: SandboxPolicy): SandboxPolicy {
  const list = (key: 'allowRead' | 'allowWrite' | 'allowNet' | 'allowEnv') => [...(base[key] ?? []), ...(over[key] ?? [])];
  return {
    allowRead: list('allowRead'),
    allowWrite: list('allowWrite'),
    allowNet: list('allowNet'),
    allowEnv: list('allowEnv'),
    memoryMb: over.memoryMb ?? base.memoryMb,
    processes: over.processes ?? base.processes,
    cpuSeconds: over.cpuSeconds ?? base.cpuSeconds,
  };
}
