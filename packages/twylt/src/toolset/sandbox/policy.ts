/**
 * The sandbox policy a person reads and writes (ADR 0032): what a tool may read and write
 * beyond its own code and workspace, which hosts it may reach through its proxy in the
 * consumer, which variables of the consumer it gets, and its limits. Plain data; the driver
 * (bwrap.ts) turns it into a kernel sandbox.
 */
import { SandboxPolicyError } from './errors.js';

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

/** The forms of an `allowNet` entry, as every refusal names them. */
export const HOST_FORMS = 'HOST, HOST:PORT or *.DOMAIN';

/**
 * An `allowNet` entry the proxy can match: a name or IPv4 address, `*.domain`, or a
 * bracketed IPv6 address, each with an optional port. Anything else (a URL, a path, a
 * wildcard inside a name) would never match, and so would silently block its host.
 */
export function isHostPattern(text: string): boolean {
  return /^(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(text);
}

/** One mistake in a policy: where (`allowNet[1]`), what is wrong, and the value. */
export interface PolicyIssue {
  path: string;
  message: string;
  value: unknown;
}

const LISTS = ['allowRead', 'allowWrite', 'allowNet', 'allowEnv'] as const;
const LIMITS = ['memoryMb', 'processes', 'cpuSeconds'] as const;

/**
 * The mistakes of a policy, whatever it came from (flags, a config file, code): the one
 * check of its rules, so that none of them is enforced for one source and not another.
 */
export function sandboxPolicyIssues(policy: SandboxPolicy): PolicyIssue[] {
  const issues: PolicyIssue[] = [];
  for (const key of LISTS) {
    const list: unknown = policy[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) {
      issues.push({ path: key, message: 'must be a list of strings', value: list });
      continue;
    }
    for (const [at, item] of list.entries()) {
      if (typeof item !== 'string' || item === '') issues.push({ path: `${key}[${at}]`, message: 'must be a non-empty string', value: item });
      else if (key === 'allowNet' && !isHostPattern(item)) issues.push({ path: `${key}[${at}]`, message: `takes ${HOST_FORMS}`, value: item });
    }
  }
  for (const key of LIMITS) {
    const limit: unknown = policy[key];
    if (limit !== undefined && !(Number.isSafeInteger(limit) && (limit as number) >= 0)) issues.push({ path: key, message: 'must be a whole number (0: no limit)', value: limit });
  }
  return issues;
}

/** `policy` as it is, or a SandboxPolicyError naming each of its mistakes (sandboxPolicyIssues). */
export function checkSandboxPolicy<P extends SandboxPolicy | true>(policy: P, where = 'the sandbox policy'): P {
  // Stryker disable next-line ConditionalExpression,BooleanLiteral: checking `true` itself is equivalent: every field of `true` reads as undefined, so it has no issue
  const issues = policy === true ? [] : sandboxPolicyIssues(policy);
  if (issues.length > 0) throw new SandboxPolicyError(`${where} is not valid:\n${issues.map((issue) => `  ${issue.path}: ${issue.message}, got ${JSON.stringify(issue.value)}`).join('\n')}`);
  return policy;
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
  // Stryker disable next-line ConditionalExpression,BooleanLiteral: reading `true` itself is equivalent: every field of `true` reads as undefined and gets its default
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
