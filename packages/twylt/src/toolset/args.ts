/**
 * Tools on a command line: `[options] -- CMD [ARG...] [-- CMD [ARG...]]...`, the form that
 * `twylt-mcp`, `twylt inspect` and the `twylt` subcommands share. Pure and light: every
 * command loads it before it knows whether it has any work to do.
 */

export const SEPARATOR = '--';

/** Wrong use of a command line; the message says what and how to fix it. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * The options before the first `--` and everything after it, later `--`s included (so a
 * tool's command may carry options of its own); `rest` is undefined when there is no `--`.
 */
export function cutAtSeparator(argv: readonly string[]): { options: string[]; rest?: string[] } {
  const cut = argv.indexOf(SEPARATOR);
  return cut === -1 ? { options: [...argv] } : { options: argv.slice(0, cut), rest: argv.slice(cut + 1) };
}

/** Where a command line's options end and its tool commands begin. */
export function splitArgv(argv: readonly string[]): { options: string[]; commands: string[][] } {
  const { options, rest } = cutAtSeparator(argv);
  return { options, commands: rest ? splitCommands(rest) : [] };
}

/** `a b -- c d` → [[a, b], [c, d]]; an empty command is a mistake, not a tool (a UsageError). */
export function splitCommands(rest: readonly string[]): string[][] {
  const commands: string[][] = [[]];
  for (const arg of rest) {
    if (arg === SEPARATOR) commands.push([]);
    else commands.at(-1)!.push(arg);
  }
  const empty = commands.findIndex((command) => command.length === 0);
  if (empty !== -1) throw new UsageError(`tool ${empty + 1}: nothing follows "--"; give a command such as "-- python3 tool.py"`);
  return commands;
}
