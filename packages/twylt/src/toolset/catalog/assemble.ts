/**
 * A served tool set, assembled: the one sequence every consumer that serves tools from a
 * command line runs (`twylt-mcp`, `twylt inspect`): collect the entries of the config files
 * and commands, make the sandbox ready, scan the folders, and put the sandbox into the
 * defaults. What each consumer does with the set (describe it, serve it) stays its own.
 */
import { availableParallelism } from 'node:os';
import { scanForServing } from './index.js';
import { collectEntries } from '../config.js';
import type { ToolEntry } from '../entry.js';
import { resolveLimits, type ToolDefaults } from '../policy.js';
import type { PreparedSandbox, PrepareOptions } from '../sandbox/bwrap.js';
import { sandboxForEntries } from '../sandbox/flags.js';
import type { SandboxPolicy } from '../sandbox/policy.js';

/** Where a consumer's tools come from, and what they run under. Paths are absolute. */
export interface ToolsetSources {
  /** Config files, in order (collectEntries). */
  configs: readonly string[];
  /** Tool commands given on the command line, each an argv. */
  commands: readonly (readonly string[])[];
  /** Folders to scan (scanForServing): their ok tools join the set. */
  scans: readonly string[];
  /** The consumer's defaults (its flags): handed on by reference, the sandbox added. */
  defaults: ToolDefaults;
  /** The sandbox its flags ask for; entries may still ask for one of their own. */
  sandbox?: SandboxPolicy;
  /** How the sandbox reports (its refused hosts). */
  sandboxOptions?: PrepareOptions;
  /** Where the scanned tools run, and the environments and interpreter they use (ScanOptions). */
  workspacesDir?: string;
  envsDir?: string;
  python?: string;
}

export interface AssembledToolset {
  /** The entries of the config files and commands, then the scanned ones. */
  entries: ToolEntry[];
  /** `sources.defaults`, itself when there is no sandbox, else a copy with the sandbox. */
  defaults: ToolDefaults;
  /** The consumer's sandbox, ready, or undefined; its owner closes it. */
  sandbox: PreparedSandbox | undefined;
}

/**
 * The tool set of `sources`. Each tool a scan leaves out is handed to `report` with its
 * reason. Throws ConfigError (a config file, a folder), SandboxPolicyError or
 * SandboxUnavailableError (the sandbox), before any tool has run when the sandbox fails.
 */
export async function assembleToolset(sources: ToolsetSources, report: (line: string) => void): Promise<AssembledToolset> {
  const listed = await collectEntries(sources.configs, sources.commands);
  // Ready before any tool starts (the scan's describes included), or a refusal to start.
  const sandbox = await sandboxForEntries(sources.sandbox, listed, sources.sandboxOptions);
  const defaults = sandbox ? { ...sources.defaults, sandbox } : sources.defaults;
  const scanned = await scanForServing(
    sources.scans,
    // A scanned tool sets no time-out of its own yet: it describes under the consumer's.
    {
      timeoutMs: resolveLimits({}, defaults).describeTimeoutMs,
      jobs: availableParallelism(),
      sandbox,
      workspacesDir: sources.workspacesDir,
      envsDir: sources.envsDir,
      python: sources.python,
    },
    report,
  );
  return { entries: [...listed, ...scanned], defaults, sandbox };
}
