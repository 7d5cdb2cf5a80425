/**
 * The `twylt-mcp` command line: bridge options first, then one `--` before each tool's
 * command. Pure: turns argv into a plan, reads no files.
 *
 *   twylt-mcp [--config FILE]... [--timeout MS] [--max-output-bytes N] [--warm N] [--max-message-bytes N] [--http [HOST:]PORT ...] [-- CMD [ARG...]]...
 */
import { parseArgs } from 'node:util';
import { parseListenAddress } from 'twylt/server';
import { splitArgv, UsageError } from 'twylt/toolset';

export interface CliPlan {
  help: boolean;
  version: boolean;
  /** Config files, in the order given. */
  configs: string[];
  /** Tools given after `--`, each an argv. */
  commands: string[][];
  /** Defaults for every tool that does not set its own. */
  timeoutMs?: number;
  maxOutputBytes?: number;
  /** Warm processes per tool, of all tools together, and how long one may wait unused (ADR 0026). */
  warm?: number;
  maxWarm?: number;
  warmIdleMs?: number;
  /** Tool processes at once, and calls that may wait for one (both modes). */
  maxConcurrency?: number;
  maxQueue?: number;
  /** Largest JSON-RPC message read from stdin (stdio mode). */
  maxMessageBytes?: number;
  /** Serve over HTTP at this address instead of stdio. */
  http?: HttpPlan;
}

/** The options of `--http` mode; the token itself is read by the caller (file or environment). */
export interface HttpPlan {
  host: string;
  port: number;
  tokenFile?: string;
  /** Normalized: lower case, no trailing slash. */
  allowOrigins: string[];
  allowHosts: string[];
  maxBodyBytes?: number;
  graceMs?: number;
  logInput: boolean;
}

export const USAGE = `Usage: twylt-mcp [options] -- COMMAND [ARG...] [-- COMMAND [ARG...]]...
       twylt-mcp --config tools.json [options] [-- COMMAND [ARG...]]...
       twylt-mcp --http [HOST:]PORT [options] -- COMMAND [ARG...]...

Serve TWYLT executables as MCP tools, over stdio or, with --http, over MCP's Streamable
HTTP transport. Each "--" starts one tool's command, which runs directly (no shell).
Tools from config files and from the command line are served together; two tools must
not share a name.

Options:
  --config FILE            tools from a JSON file: {"tools": [{"command": [...], "cwd"?,
                           "env"?, "timeoutMs"?, "maxOutputBytes"?, "name"?,
                           "transport"?, "warm"?}]}; repeatable
  --timeout MS             default time-out of each call and of the start-up describe
                           (default 30000)
  --max-output-bytes N     default limit of a tool's stdout and of its stderr
                           (default 4194304)
  --warm N                 start N processes of each tool ahead of its calls, waiting on
                           stdin, so that a call skips the tool's start-up; a config
                           entry's "warm" overrides it (default 0: none)
  --max-warm N             warm processes of all tools together (default 8): each holds
                           its tool's memory while it waits (30-60 MB for a Node.js or
                           Python tool), so size it to the memory you can spare
  --warm-idle-ms MS        retire a warm process unused for this long; the next call
                           starts cold and warms the tool again (default 300000)
  --max-concurrency N      tool processes at once; further calls wait (default: no limit
                           over stdio, the number of CPUs over HTTP)
  --max-queue N            calls that may wait for a slot; beyond, a call is refused with
                           JSON-RPC error -32010 and not run (default 100)
  --max-message-bytes N    stdio: largest JSON-RPC message read; a longer line is answered
                           with error -32600 and skipped (default 10485760)
  -h, --help               show this help
  -V, --version            show the version

HTTP mode:
  --http [HOST:]PORT       serve at http://HOST:PORT/mcp, stateless (default host
                           127.0.0.1; port 0 picks a free one); GET /healthz needs no token
  --token-file FILE        the bearer token clients must send, read from FILE; or set
                           TWYLT_MCP_TOKEN. Required unless HOST is loopback
  --allow-origin ORIGIN    a browser origin allowed to call (https://app.example.com);
                           requests from other origins get 403; repeatable
  --allow-host NAME        a Host header value to accept (NAME or NAME:PORT); default:
                           the bound address, or any Host when a token is required;
                           repeatable
  --max-body-bytes N       largest request body (default 4194304)
  --grace-ms MS            on SIGTERM, how long calls in progress may finish before their
                           tools are killed (default 25000)
  --log-input              put each call's arguments into its log line (they may hold
                           secrets; off by default)

Examples:
  twylt-mcp -- python3 tools/echo/tool.py -- node build/examples/echo/tool.js
  TWYLT_MCP_TOKEN=... twylt-mcp --http 0.0.0.0:8080 --config tools.json
`;

/** Options that only mean something with --http. */
const HTTP_ONLY = ['token-file', 'allow-origin', 'allow-host', 'max-body-bytes', 'grace-ms', 'log-input'] as const;

export function parseCli(argv: readonly string[]): CliPlan {
  let split;
  let values;
  try {
    split = splitArgv(argv);
    ({ values } = parseArgs({
      args: split.options,
      strict: true,
      allowPositionals: false,
      options: {
        config: { type: 'string', multiple: true },
        timeout: { type: 'string' },
        'max-output-bytes': { type: 'string' },
        'max-concurrency': { type: 'string' },
        warm: { type: 'string' },
        'max-warm': { type: 'string' },
        'warm-idle-ms': { type: 'string' },
        'max-queue': { type: 'string' },
        'max-message-bytes': { type: 'string' },
        http: { type: 'string' },
        'token-file': { type: 'string' },
        'allow-origin': { type: 'string', multiple: true },
        'allow-host': { type: 'string', multiple: true },
        'max-body-bytes': { type: 'string' },
        'grace-ms': { type: 'string' },
        'log-input': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'V' },
      },
    }));
  } catch (error) {
    const message = (error as Error).message;
    // A command without its "--" is the likeliest mistake; say so.
    throw new UsageError(/positional/i.test(message) ? `${message}; put "--" before each tool's command` : message);
  }
  const plan: CliPlan = {
    help: values.help ?? false,
    version: values.version ?? false,
    configs: values.config ?? [],
    commands: split.commands,
    timeoutMs: positiveInteger('--timeout', values.timeout),
    maxOutputBytes: positiveInteger('--max-output-bytes', values['max-output-bytes']),
    maxConcurrency: positiveInteger('--max-concurrency', values['max-concurrency']),
    warm: wholeNumber('--warm', values.warm),
    maxWarm: wholeNumber('--max-warm', values['max-warm']),
    warmIdleMs: positiveInteger('--warm-idle-ms', values['warm-idle-ms']),
    maxQueue: wholeNumber('--max-queue', values['max-queue']),
    maxMessageBytes: positiveInteger('--max-message-bytes', values['max-message-bytes']),
  };
  if (values.http !== undefined) {
    if (plan.maxMessageBytes !== undefined) throw new UsageError('--max-message-bytes is for stdio; over HTTP, use --max-body-bytes');
    let address;
    try {
      address = parseListenAddress(values.http);
    } catch (error) {
      throw new UsageError(`--http: ${(error as Error).message}`);
    }
    plan.http = {
      ...address,
      tokenFile: values['token-file'],
      allowOrigins: (values['allow-origin'] ?? []).map(origin),
      allowHosts: values['allow-host'] ?? [],
      maxBodyBytes: positiveInteger('--max-body-bytes', values['max-body-bytes']),
      graceMs: wholeNumber('--grace-ms', values['grace-ms']),
      logInput: values['log-input'] ?? false,
    };
  } else {
    const stray = HTTP_ONLY.find((option) => values[option] !== undefined);
    if (stray) throw new UsageError(`--${stray} needs --http [HOST:]PORT`);
  }
  if (!plan.help && !plan.version && plan.configs.length === 0 && plan.commands.length === 0) {
    throw new UsageError('no tools given: put "-- COMMAND..." after the options, or use --config FILE');
  }
  return plan;
}

function positiveInteger(option: string, text: string | undefined): number | undefined {
  return wholeNumber(option, text, 1);
}

function wholeNumber(option: string, text: string | undefined, min = 0): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < min) {
    throw new UsageError(`${option} needs a ${min > 0 ? 'positive ' : ''}whole number, got ${JSON.stringify(text)}`);
  }
  return value;
}

/**
 * An origin as a browser sends it: `scheme://host[:port]`, lower case, nothing after.
 * Throws a RangeError for anything else (a path, `null`, a bare name).
 */
export function normalizeOrigin(text: string): string {
  const normalized = text.trim().toLowerCase().replace(/\/+$/, '');
  let url: URL | undefined;
  try {
    url = new URL(normalized);
  } catch {
    // reported below
  }
  if (!url || url.origin === 'null' || url.origin !== normalized) {
    throw new RangeError(`an origin is scheme, host and port only, such as https://app.example.com; got ${JSON.stringify(text)}`);
  }
  return normalized;
}

function origin(text: string): string {
  try {
    return normalizeOrigin(text);
  } catch (error) {
    throw new UsageError(`--allow-origin: ${(error as Error).message}`);
  }
}
