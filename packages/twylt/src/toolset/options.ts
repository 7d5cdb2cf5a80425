/**
 * The flags every consumer of a tool set shares (`twylt-mcp`, `twylt inspect`), as one table
 * (ADR 0031): its parseArgs config, its help lines and what each sets in the defaults of
 * every tool. Adding a shared flag is one entry here. The machinery (OptionSpec, the number
 * parsers, the help formatter) is option-spec.ts's.
 */
import { parseListenAddress } from '../server/listen.js';
import { UsageError } from './args.js';
import { parseCount, parseDuration, type OptionSpec, type OptionValues } from './option-spec.js';
import { BUILT_IN_DEFAULTS, type ToolDefaults } from './policy.js';
import { SANDBOX_OPTIONS } from './sandbox/flags.js';

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
    help: 'default time-out of each call, in whole milliseconds',
    byDefault: BUILT_IN_DEFAULTS.timeoutMs,
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
    help: 'start N processes of each tool ahead of its calls, waiting on stdin, so that a call skips the tool\'s start-up; a config entry\'s "warm" overrides it',
    byDefault: `${BUILT_IN_DEFAULTS.warm}: none`,
    defaults: (text, option) => ({ warm: parseCount(option, text) }),
  },
  'max-warm': {
    type: 'string',
    value: 'N',
    help: 'warm processes of all tools together',
    byDefault: BUILT_IN_DEFAULTS.maxWarm,
    afterDefault: ": each holds its tool's memory while it waits (30-60 MB for a Node.js or Python tool), so size it to the memory you can spare",
    defaults: (text, option) => ({ maxWarm: parseCount(option, text) }),
  },
  metrics: {
    type: 'string',
    value: 'HOST:PORT',
    help: 'serve Prometheus metrics of the calls at http://HOST:PORT/metrics; a PORT alone is on 127.0.0.1, port 0 picks a free one; beyond loopback only with a token every scrape must send (docs/observability.md)',
  },
  // The sandbox (sandbox/flags.ts): read by sandboxFromFlags, made ready by the consumer.
  ...SANDBOX_OPTIONS,
} as const satisfies Record<string, OptionSpec<ToolDefaults>>;

/** `--metrics [HOST:]PORT` as given, or undefined (ADR 0033). */
export function metricsAddress(text: string | undefined): { host: string; port: number } | undefined {
  if (text === undefined) return undefined;
  try {
    return parseListenAddress(text);
  } catch (error) {
    throw new UsageError(`--metrics: ${(error as Error).message}`);
  }
}

/**
 * The defaults of every tool that the flags in `values` set, from `table` (default: the
 * toolset flags): one frozen object, to be handed on by reference.
 */
export function toolsetOptions(values: OptionValues, table: Readonly<Record<string, OptionSpec<ToolDefaults>>> = TOOLSET_OPTIONS): ToolDefaults {
  const defaults: ToolDefaults = {};
  for (const [name, spec] of Object.entries(table)) {
    const text = values[name];
    if (spec.defaults && typeof text === 'string') Object.assign(defaults, spec.defaults(text, `--${name}`));
  }
  return Object.freeze(defaults);
}
