/**
 * One TWYLT executable in a tool set: the shape shared by `twylt-mcp`, `twylt inspect` and
 * `twylt-ai`, whether it comes from a config file, from `-- COMMAND...` on a command line,
 * or from code.
 */
import type { ToolSpec, Transport } from '../client/types.js';
import type { SandboxPolicy } from './sandbox/policy.js';

export interface ToolEntry {
  /** The tool's argv; run directly, never through a shell. */
  command: string[];
  /** Working directory of the tool (default: the consumer's own; a config file's directory). */
  cwd?: string;
  /** Added to the consumer's environment for this tool. */
  env?: Record<string, string>;
  /** Kill a call (and the describe at start-up, unless describeTimeoutMs says otherwise) after this long, in ms. */
  timeoutMs?: number;
  /** Limit for the tool's stdout and for its stderr, each, in bytes. */
  maxOutputBytes?: number;
  /** The name consumers show; default: the name the tool publishes. */
  name?: string;
  /**
   * How calls reach the tool. Default: `cli` (the JSON as the last argument), or `stdin`
   * when the input is too large for one argument.
   */
  transport?: Transport;
  /** Where the tool sits in a catalog: "pack/subfolder", slash-separated. */
  category?: string;
  /** The tool's entry file (what a scan found), relative to a config file's directory. */
  source?: string;
  /** Stop the describe at start-up after this long, in ms (not the call time-out). */
  describeTimeoutMs?: number;
  /** The json_spec a scan recorded, served without starting the tool while `inputs` are unchanged. */
  describeCache?: DescribeCache;
  /** Processes started ahead, waiting for calls (stdin transport; default 0: none; ADR 0026). */
  warm?: number;
  /**
   * Run this tool in a kernel sandbox (docs/sandbox.md): `true`, `false` (never, even when
   * the consumer sandboxes its tools), or a policy of its own over the consumer's.
   */
  sandbox?: boolean | SandboxPolicy;
}

/** A recorded describe: `hash` of `inputs` (files and folders) and of the command and env. */
export interface DescribeCache {
  /** Files and folders whose sizes and mtimes the hash covers, relative to a config file's directory. */
  inputs: string[];
  hash: string;
  spec: ToolSpec;
}

/** A tool as code may give it: an argv array, or a full entry. */
export type ToolEntryLike = readonly string[] | ToolEntry;

export function toEntry(entry: ToolEntryLike): ToolEntry {
  const full: ToolEntry = isArgv(entry) ? { command: [...entry] } : { ...entry, command: [...entry.command] };
  if (full.command.length === 0 || full.command.some((arg) => typeof arg !== 'string')) {
    throw new TypeError(`a tool's command is a non-empty array of strings, got ${JSON.stringify(full.command)}`);
  }
  return full;
}

function isArgv(entry: ToolEntryLike): entry is readonly string[] {
  return Array.isArray(entry);
}

/** argv as a reader would type it in a shell; only the arguments that need it are quoted. */
export function showCommand(command: readonly string[]): string {
  return command.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : JSON.stringify(arg))).join(' ');
}
