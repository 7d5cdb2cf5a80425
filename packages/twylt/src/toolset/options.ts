/**
 * The flags every consumer of a tool set shares (`twylt-mcp`, `twylt inspect`), as one table
 * (ADR 0031): its parseArgs config, its help lines and what each sets in the defaults of
 * every tool. Adding a shared flag is one entry here. Also the one pair of number parsers
 * every command uses, so that a value means the same to all of them.
 */
import { DEFAULT_TIMEOUT_MS } from '../client/process.js';
import { parseListenAddress } from '../server/listen.js';
import { UsageError } from './args.js';
import { SANDBOX_OPTIONS } from './sandbox/flags.js';
import type { ToolDefaults } from './policy.js';
import { DEFAULT_MAX_WARM } from './warm.js';

/** The usage exit code of every TWYLT command (EX_USAGE): 2 to 6 are a tool's own codes. */
export const USAGE_EXIT = 64;

/** The longest time-out a timer can hold: Node.js fires a longer one at once. */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/** One flag: its parseArgs config, its help, and what it sets in the tools' defaults. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  /** How the help names its value: FILE, DIR, MS, N. */
  value?: string;
  /** One paragraph; formatOptions wraps it. */
  help: string;
  /** What the flag's text sets in the defaults of every tool (string flags only). */
  defaults?: (text: string, option: string) => ToolDefaults;
}

/** The toolset flags, in help order. */
export const TOOLSET_OPTIONS = {
  config: {
    type: 'string',
    multiple: true,
    value: 'FILE',
    help: 'tools from a JSON file: {"tools": [{"command": [...], "cwd"?, "env"?, "timeoutMs"?, "maxOutputBytes"?, "name"?, "transport"?, "category"?, "warm"?}]}, or a catalog that twylt scan --write made; repeatable',
  },
  scan: {
    type: 'string',
    multiple: true,
    value: 'DIR',
    help: 'the ok tools found under DIR, as "twylt scan DIR" finds them: this RUNS CODE FROM DIR (each entry point describes itself); nothing is installed, but the environments "twylt scan --install DIR" made are used; repeatable',
  },
  workspaces: {
    type: 'string',
    value: 'DIR',
    help: "where the tools --scan finds run: each in a folder of its own under DIR, never its code's folder, which stays read-only in a sandbox (default $TWYLT_WORKSPACES_DIR, else $XDG_STATE_HOME/twylt/workspaces, ~/.local/state/twylt/workspaces without it)",
  },
  envs: {
    type: 'string',
    value: 'DIR',
    help: 'the environments "twylt scan --install --envs DIR" made, for the tools --scan finds (default $TWYLT_ENVS_DIR, else $XDG_CACHE_HOME/twylt/envs, ~/.cache/twylt/envs without it): give it when the bridge is started without your shell\'s environment, as MCP clients do',
  },
  python: {
    type: 'string',
    value: 'CMD',
    help: 'the interpreter of the Python tools --scan finds (default python3 on PATH); an environment was made for one interpreter\'s version: give the one "twylt scan --install" ran with',
  },
  timeout: {
    type: 'string',
    value: 'MS',
    help: `default time-out of each call, in whole milliseconds (default ${DEFAULT_TIMEOUT_MS})`,
    defaults: (text, option) => ({ timeoutMs: parseDuration(option, text) }),
  },
  'describe-timeout': {
    type: 'string',
    value: 'MS',
    help: 'time-out of describing each tool (default: --timeout)',
    defaults: (text, option) => ({ describeTimeoutMs: parseDuration(option, text) }),
  },
  strict: {
    type: 'boolean',
    help: 'refuse to start when a tool cannot be described (default: leave it out, say so on stderr, serve the others and describe it again later)',
  },
  warm: {
    type: 'string',
    value: 'N',
    help: 'start N processes of each tool ahead of its calls, waiting on stdin, so that a call skips the tool\'s start-up; a config entry\'s "warm" overrides it (default 0: none)',
    defaults: (text, option) => ({ warm: parseCount(option, text) }),
  },
  'max-warm': {
    type: 'string',
    value: 'N',
    help: `warm processes of all tools together (default ${DEFAULT_MAX_WARM}): each holds its tool's memory while it waits (30-60 MB for a Node.js or Python tool), so size it to the memory you can spare`,
    defaults: (text, option) => ({ maxWarm: parseCount(option, text) }),
  },
  metrics: {
    type: 'string',
    value: 'HOST:PORT',
    help: 'serve Prometheus metrics of the calls at http://HOST:PORT/metrics; a PORT alone is on 127.0.0.1, port 0 picks a free one; beyond loopback only with a token every scrape must send (docs/observability.md)',
  },
  // The sandbox (sandbox/flags.ts): read by sandboxFromFlags, made ready by the consumer.
  ...SANDBOX_OPTIONS,
} as const satisfies Record<string, OptionSpec>;

/** `--metrics [HOST:]PORT` as given, or undefined (ADR 0033). */
export function metricsAddress(text: string | undefined): { host: string; port: number } | undefined {
  if (text === undefined) return undefined;
  try {
    return parseListenAddress(text);
  } catch (error) {
    throw new UsageError(`--metrics: ${(error as Error).message}`);
  }
}

/** What parseArgs gives for a table's flags. */
export type OptionValues = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;

/**
 * The defaults of every tool that the flags in `values` set, from `table` (default: the
 * toolset flags): one frozen object, to be handed on by reference.
 */
export function toolsetOptions(values: OptionValues, table: Readonly<Record<string, OptionSpec>> = TOOLSET_OPTIONS): ToolDefaults {
  const defaults: ToolDefaults = {};
  for (const [name, spec] of Object.entries(table)) {
    const text = values[name];
    if (spec.defaults && typeof text === 'string') Object.assign(defaults, spec.defaults(text, `--${name}`));
  }
  return Object.freeze(defaults);
}

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

/** A whole number (a count, a size in bytes, a port) from `min` (default 0) to `max`. */
export function parseCount(option: string, text: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? (min === 0 ? '' : ` of at least ${min}`) : ` from ${min} to ${max}`;
    throw new UsageError(`${option} takes a whole number${range}; got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/**
 * Help lines of a table's flags: `--name VALUE` at `indent`, its help wrapped from `column`
 * to `width` (on a line of its own when the flag is longer than the column allows).
 */
export function formatOptions(table: Readonly<Record<string, OptionSpec>>, { indent = 2, column = 27, width = 91 } = {}): string {
  const lines: string[] = [];
  for (const [name, spec] of Object.entries(table)) {
    const flag = `${' '.repeat(indent)}${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.value ? ` ${spec.value}` : ''}`;
    const text = wrap(spec.help, width - column);
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
