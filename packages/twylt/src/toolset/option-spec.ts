/**
 * The machinery of every TWYLT command line (ADR 0031): what one flag is (OptionSpec), the
 * one pair of number parsers, the help formatter and the usage exit code. The tables
 * themselves live with what they set (options.ts, sandbox/flags.ts, search/options.ts, each
 * command); this module imports none of them, so that every table can import it.
 */
import { UsageError } from './args.js';

/** The usage exit code of every TWYLT command (EX_USAGE): 2 to 6 are a tool's own codes. */
export const USAGE_EXIT = 64;

/** The longest time-out a timer can hold: Node.js fires a longer one at once. */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/**
 * One flag: its parseArgs config, its help, and (for a table of tool defaults) what it sets
 * in them, of type `Sets`. Spread into parseArgs as it is: parseArgs reads `type`,
 * `multiple` and `short`, and leaves the other fields alone.
 */
export interface OptionSpec<Sets = unknown> {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  /** How the help names its value: FILE, DIR, MS, N. */
  value?: string;
  /** One paragraph; formatOptions wraps it, and adds `byDefault` after it. */
  help: string;
  /**
   * The value the command takes when the flag is not given, named by the constant the code
   * uses, so that the help cannot say another: printed as "(default X)" after `help`. Not
   * parseArgs's `default`: a flag not given stays undefined in what parseArgs returns.
   */
  byDefault?: number | string;
  /** Said with the default, in its parentheses: "(default 1024; 0: no limit)". */
  defaultNote?: string;
  /** Help that follows the default's parentheses, its punctuation included ("; each ..."). */
  afterDefault?: string;
  /** What the flag's text sets in the defaults of every tool (string flags only). */
  defaults?: (text: string, option: string) => Sets;
}

/** What parseArgs gives for a table's flags. */
export type OptionValues = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;

/**
 * A time in milliseconds: a whole number from `min` (default 1) to MAX_DURATION_MS. A
 * fraction is refused, as a config file's `timeoutMs` refuses it: every command reads `1.5`
 * the same way.
 */
export function parseDuration(option: string, text: string, min = 1): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > MAX_DURATION_MS) {
    throw new UsageError(`${option} takes a whole number of milliseconds from ${min} to ${MAX_DURATION_MS}; got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/**
 * A whole number (a count, a size in bytes, a port) from `min` (default 0) to `max`; `note`
 * says what a value means when the range does not ("0: no limit").
 */
export function parseCount(option: string, text: string, min = 0, max = Number.MAX_SAFE_INTEGER, note?: string): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? (min === 0 ? '' : ` of at least ${min}`) : ` from ${min} to ${max}`;
    throw new UsageError(`${option} takes a whole number${range}${note ? ` (${note})` : ''}; got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** The help paragraph of one flag: its help, then its default when it has one. */
export function optionHelp(spec: OptionSpec): string {
  if (spec.byDefault === undefined) return spec.help;
  return `${spec.help} (default ${spec.byDefault}${spec.defaultNote ? `; ${spec.defaultNote}` : ''})${spec.afterDefault ?? ''}`;
}

/**
 * Help lines of a table's flags: `--name VALUE` at `indent`, its help wrapped from `column`
 * to `width` (on a line of its own when the flag is longer than the column allows).
 */
export function formatOptions(table: Readonly<Record<string, OptionSpec>>, { indent = 2, column = 27, width = 91 } = {}): string {
  const lines: string[] = [];
  for (const [name, spec] of Object.entries(table)) {
    const flag = `${' '.repeat(indent)}${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.value ? ` ${spec.value}` : ''}`;
    const text = wrap(optionHelp(spec), width - column);
    if (flag.length + 1 > column) lines.push(flag);
    else lines.push(`${flag.padEnd(column)}${text.shift()}`);
    for (const line of text) lines.push(`${' '.repeat(column)}${line}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Words in lines of at most `width` characters (a longer word stands alone). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}
