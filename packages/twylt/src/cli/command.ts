/** What a subcommand is, the I/O it gets, and the exit codes of the `twylt` command itself. */
import { parseArgs, type ParseArgsConfig } from 'node:util';

type ParsedResults<T extends ParseArgsConfig> = ReturnType<typeof parseArgs<T>>;

export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export interface Command {
  name: string;
  /** Full help text, printed by `twylt <name> --help`. */
  help: string;
  /** Runs with the arguments after the subcommand name; resolves to the exit code. */
  run(args: string[], io: Io): Promise<number>;
}

/** Exit codes of `twylt` itself. `twylt call` passes a tool's own exit code through instead. */
export const CLI_EXIT = {
  ok: 0,
  /** A check failed, or the tool could not be run or misbehaved (time-out, crash, non-JSON output). */
  failed: 1,
  /** Wrong usage of `twylt` (EX_USAGE); chosen so as not to collide with the tool's codes 2 to 6. */
  usage: 64,
} as const;

export class UsageError extends Error {}

/**
 * Split `[options...] -- <command...>`: the tool's command is everything after the first
 * `--`, so it may carry options of its own.
 */
export function splitAtDashes(args: string[]): { own: string[]; command: string[] } {
  const split = args.indexOf('--');
  return split === -1 ? { own: args, command: [] } : { own: args.slice(0, split), command: args.slice(split + 1) };
}

/** node:util parseArgs, strict, with its errors turned into usage errors. */
export function parseOptions<T extends ParseArgsConfig>(config: T): ParsedResults<T> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function requireCommand(command: string[]): void {
  if (command.length === 0) throw new UsageError('no tool command given: put it after "--", e.g. -- python3 tool.py');
}
