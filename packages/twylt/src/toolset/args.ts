/**
 * Tools on a command line: `[options] -- CMD [ARG...] [-- CMD [ARG...]]...`, the form that
 * `twylt-mcp` and `twylt inspect` share, plus their `--config FILE` lists.
 */
import type { ToolEntry } from './entry.js';
import { readConfig } from './config.js';

export const SEPARATOR = '--';

/** Where a command line's options end and its tool commands begin. */
export function splitArgv(argv: readonly string[]): { options: string[]; commands: string[][] } {
  const cut = argv.indexOf(SEPARATOR);
  if (cut === -1) return { options: [...argv], commands: [] };
  return { options: argv.slice(0, cut), commands: splitCommands(argv.slice(cut + 1)) };
}

/** `a b -- c d` → [[a, b], [c, d]]; an empty command is a mistake, not a tool. */
export function splitCommands(rest: readonly string[]): string[][] {
  const commands: string[][] = [[]];
  for (const arg of rest) {
    if (arg === SEPARATOR) commands.push([]);
    else commands.at(-1)!.push(arg);
  }
  const empty = commands.findIndex((command) => command.length === 0);
  if (empty !== -1) throw new RangeError(`tool ${empty + 1}: nothing follows "--"; give a command such as "-- python3 tool.py"`);
  return commands;
}

/** The tools of config files (in order) followed by those given as commands. Throws ConfigError. */
export async function collectEntries(configs: readonly string[], commands: readonly (readonly string[])[]): Promise<ToolEntry[]> {
  const fromFiles = await Promise.all(configs.map((file) => readConfig(file)));
  return [...fromFiles.flat(), ...commands.map((command) => ({ command: [...command] }))];
}
