/** What a subcommand is, the I/O it gets, and the exit codes of the `twylt` command itself. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { cutAtSeparator, UsageError } from '../toolset/args.js';
import { USAGE_EXIT, type OptionSpec } from '../toolset/option-spec.js';

export { UsageError };

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
  /** Wrong usage of `twylt` (EX_USAGE, as every TWYLT command); not to collide with the tool's codes 2 to 6. */
  usage: USAGE_EXIT,
} as const;

/** node:util parseArgs, strict, with its errors turned into usage errors. */
export function parseOptions<T extends ParseArgsConfig>(config: T): ParsedResults<T> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function requireCommand(command: string[]): void {
  if (command.length === 0) throw new UsageError('no tool command given: put it after "--", e.g. -- python3 tool.py');
}

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** `-h, --help`, the flag of every subcommand, last in each help's table. */
export const HELP_OPTION = { type: 'boolean', short: 'h', help: 'show this help' } as const satisfies OptionSpec;

/** Options every tool-wrapping subcommand has; each describes its own `--timeout` in its table. */
const WRAPPING_OPTIONS = {
  timeout: { type: 'string' },
  help: HELP_OPTION,
} as const;

type WrappingValues<O extends OptionsConfig> = ParsedResults<{
  args: string[];
  strict: true;
  allowPositionals: false;
  options: O & typeof WRAPPING_OPTIONS;
}>['values'];

/**
 * A subcommand of the shape `twylt <name> [options] -- <tool command...>`: its own options
 * (plus `--timeout` and `--help`) before `--`, the tool's command after it. Help and a
 * missing tool command are handled here; `run` gets the parsed options and the command.
 */
export function wrappingCommand<const O extends OptionsConfig>(spec: {
  name: string;
  help: string;
  options: O;
  run(values: WrappingValues<O>, tool: string[], io: Io): Promise<number>;
}): Command {
  return {
    name: spec.name,
    help: spec.help,
    async run(args, io) {
      const { options: own, rest: tool = [] } = cutAtSeparator(args);
      const { values } = parseOptions({
        args: own,
        strict: true,
        allowPositionals: false,
        options: { ...spec.options, ...WRAPPING_OPTIONS },
      }) as { values: WrappingValues<O> };
      // Inside this generic the parsed type is opaque; `help` is always among the options.
      if ((values as { help?: boolean }).help) {
        io.stdout.write(spec.help);
        return CLI_EXIT.ok;
      }
      requireCommand(tool);
      return spec.run(values, tool, io);
    },
  };
}
