/**
 * The `--sandbox*` flags, one table for every command that runs tools (`twylt call`, `check`,
 * `scan`, `inspect`, `twylt-mcp`). Light: reading the flags loads no sandbox code; only a
 * consumer given `--sandbox` imports the driver (prepareSandbox in toolset/index.ts).
 */
import type { SpawnSandbox } from '../../client/spawn.js';
import { UsageError } from '../args.js';
import { showCommand, type ToolEntry } from '../entry.js';
import { parseCount, type OptionSpec } from '../option-spec.js';
import type { PreparedSandbox, PrepareOptions } from './bwrap.js';
import { HOST_FORMS, SANDBOX_DEFAULTS, checkSandboxPolicy, isHostPattern, type SandboxPolicy } from './policy.js';

/** What 0 means to a limit. */
const NO_LIMIT = '0: no limit';

/** The sandbox's flags, in help order; part of the toolset flags (options.ts) and of call, check and scan. */
export const SANDBOX_OPTIONS = {
  sandbox: {
    type: 'boolean',
    help: 'run every tool process in a kernel sandbox (Linux, bubblewrap): its code and workspace only, no network, no other process, none of your variables, limits (docs/sandbox.md); any --sandbox-* flag implies it',
  },
  'sandbox-allow-read': { type: 'string', multiple: true, value: 'PATH', help: 'also let tools read PATH; repeatable' },
  'sandbox-allow-write': { type: 'string', multiple: true, value: 'PATH', help: 'also let tools read and write PATH; repeatable' },
  'sandbox-allow-net': {
    type: 'string',
    multiple: true,
    value: 'HOST',
    help: "let tools reach HOST[:PORT] (or *.DOMAIN; without a port, 80 and 443) through the consumer's filtering proxy; repeatable",
  },
  'sandbox-allow-env': { type: 'string', multiple: true, value: 'NAME', help: 'pass the variable NAME of this environment on; repeatable' },
  'sandbox-memory': { type: 'string', value: 'MB', help: 'memory of one call, in MiB', byDefault: SANDBOX_DEFAULTS.memoryMb, defaultNote: NO_LIMIT },
  'sandbox-processes': { type: 'string', value: 'N', help: 'processes and threads of one call', byDefault: SANDBOX_DEFAULTS.processes, defaultNote: NO_LIMIT },
  'sandbox-cpu-seconds': { type: 'string', value: 'S', help: 'CPU seconds of each process of a call', byDefault: SANDBOX_DEFAULTS.cpuSeconds, defaultNote: NO_LIMIT },
} as const satisfies Record<string, OptionSpec>;

export interface SandboxFlagValues {
  sandbox?: boolean;
  'sandbox-allow-read'?: string[];
  'sandbox-allow-write'?: string[];
  'sandbox-allow-net'?: string[];
  'sandbox-allow-env'?: string[];
  'sandbox-memory'?: string;
  'sandbox-processes'?: string;
  'sandbox-cpu-seconds'?: string;
}

/** The policy the flags ask for, or undefined when none was given. Throws UsageError. */
export function sandboxFromFlags(values: SandboxFlagValues, cwd: string): SandboxPolicy | undefined {
  const given = Object.keys(SANDBOX_OPTIONS).some((name) => values[name as keyof SandboxFlagValues] !== undefined);
  if (!given || values.sandbox === false) return undefined;
  const absolute = (paths: string[] | undefined) => paths?.map((path) => (path.startsWith('/') ? path : `${cwd}/${path}`));
  const policy: SandboxPolicy = {};
  if (values['sandbox-allow-read']) policy.allowRead = absolute(values['sandbox-allow-read']);
  if (values['sandbox-allow-write']) policy.allowWrite = absolute(values['sandbox-allow-write']);
  if (values['sandbox-allow-net']) policy.allowNet = values['sandbox-allow-net'].map(hostFlag);
  if (values['sandbox-allow-env']) policy.allowEnv = values['sandbox-allow-env'];
  const count = (flag: 'sandbox-memory' | 'sandbox-processes' | 'sandbox-cpu-seconds') => {
    const text = values[flag];
    return text === undefined ? undefined : parseCount(`--${flag}`, text, 0, Number.MAX_SAFE_INTEGER, NO_LIMIT);
  };
  const memoryMb = count('sandbox-memory');
  const processes = count('sandbox-processes');
  const cpuSeconds = count('sandbox-cpu-seconds');
  if (memoryMb !== undefined) policy.memoryMb = memoryMb;
  if (processes !== undefined) policy.processes = processes;
  if (cpuSeconds !== undefined) policy.cpuSeconds = cpuSeconds;
  return policy;
}

/** A host as the policy takes it (isHostPattern, the one rule of every policy's hosts). */
function hostFlag(text: string): string {
  if (!isHostPattern(text)) throw new UsageError(`--sandbox-allow-net takes ${HOST_FORMS}; got "${text}"`);
  return text;
}

/**
 * The sandbox the flags ask for, ready (prepareSandbox), or undefined without them. Throws
 * UsageError for a bad flag and SandboxUnavailableError when it cannot work here.
 */
// Stryker disable next-line ArrayDeclaration: a planted entry in the default list is a string, whose `sandbox` is undefined: it asks for nothing, as the empty list
export async function openSandbox(values: SandboxFlagValues, cwd: string, entries: readonly ToolEntry[] = []): Promise<PreparedSandbox | undefined> {
  return sandboxForEntries(sandboxFromFlags(values, cwd), entries);
}

/**
 * The consumer's sandbox for a set of entries: `policy` (its flags or options), or the
 * default policy when only entries ask for one; undefined when nothing does. Each entry's
 * own policy is merged over it when its launcher is made (entrySandbox), hosts included.
 * Every policy is checked first (a SandboxPolicyError), code's as flags' and files' are.
 */
export async function sandboxForEntries(
  policy: SandboxPolicy | true | undefined,
  entries: readonly ToolEntry[],
  options: PrepareOptions = {},
): Promise<PreparedSandbox | undefined> {
  if (policy !== undefined) checkSandboxPolicy(policy);
  for (const entry of entries) if (typeof entry.sandbox === 'object') checkSandboxPolicy(entry.sandbox, `the sandbox policy of ${showCommand(entry.command)}`);
  if (policy === undefined && !entries.some((entry) => entry.sandbox !== undefined && entry.sandbox !== false)) return undefined;
  const { prepareSandbox } = await import('./bwrap.js');
  // Stryker disable next-line LogicalOperator,BooleanLiteral: prepareSandbox(undefined) takes its default `true`, and resolveSandboxPolicy(false) reads every field as undefined: the default policy either way
  return prepareSandbox(policy ?? true, options);
}

/**
 * The launcher of one entry's processes: in the consumer's sandbox unless the entry says
 * `"sandbox": false`, with the entry's own policy over the consumer's, its `cwd` as its
 * workspace. An entry that asks for a sandbox its consumer did not prepare is refused.
 */
export function entrySandbox(entry: ToolEntry, prepared: PreparedSandbox | undefined): SpawnSandbox | undefined {
  if (entry.sandbox === false) return undefined;
  if (!prepared) {
    if (entry.sandbox === undefined) return undefined;
    throw new Error(`the tool ${JSON.stringify(entry.command)} asks for a sandbox, and its consumer prepared none (sandboxForEntries)`);
  }
  const own = typeof entry.sandbox === 'object' ? entry.sandbox : undefined;
  return prepared.forTool({ workspace: entry.cwd ?? process.cwd(), name: entry.name, policy: own });
}
