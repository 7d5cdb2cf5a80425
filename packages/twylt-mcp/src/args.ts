/**
 * The `twylt-mcp` command line: bridge options first, then one `--` before each tool's
 * command. Pure: turns argv into a plan, reads no files.
 *
 *   twylt-mcp [OPTION]... -- COMMAND [ARG...] [-- COMMAND [ARG...]]...
 *   twylt-mcp (--config FILE | --scan DIR)... [OPTION]... [-- COMMAND [ARG...]]...
 *   twylt-mcp --http [HOST:]PORT [HTTP OPTION]... [OAUTH OPTION]... [OPTION]... [-- COMMAND [ARG...]]...
 *
 * OPTION: the toolset's flags (TOOLSET_OPTIONS: --config, --scan, --timeout, --sandbox...),
 * the bridge's (BRIDGE_OPTIONS: --catalog tools|browse|search, --describe-retry-ms...) and
 * search mode's (SEARCH_OPTIONS); HTTP OPTION and OAUTH OPTION: HTTP_OPTIONS and
 * AUTH_OPTIONS below. USAGE (`--help`) prints every one of them from these tables.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { EmbeddingsFlags } from 'twylt/toolset';
import { DEFAULT_JWKS_COOLDOWN_MS, authServerUrl, normalizeOrigin, parseListenAddress, resourceUrl } from 'twylt/server';
import { BUILT_IN_DEFAULTS, SEARCH_OPTIONS, embeddingsFromFlags, TOOLSET_OPTIONS, formatOptions, metricsAddress, parseCount, parseDuration, sandboxFromFlags, splitArgv, toolsetOptions, UsageError, type OptionSpec, type SandboxPolicy, type ToolDefaults } from 'twylt/toolset';
import { CATALOG_MODES, type CatalogMode } from './catalog-mode.js';
import { DEFAULT_GRACE_MS, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_QUEUE, DEFAULT_RETRY_MS, MAX_RETRY_MS } from './defaults.js';


export interface CliPlan {
  help: boolean;
  version: boolean;
  /** Config files, in the order given. */
  configs: string[];
  /** Folders scanned for tools at start (`--scan`), in the order given. */
  scans: string[];
  /** The root of the scanned tools' workspaces (`--workspaces`, absolute); undefined: the default. */
  workspaces?: string;
  /** The environments of the scanned tools (`--envs`, absolute); undefined: the default. */
  envs?: string;
  /** The interpreter of the scanned Python tools (`--python`); undefined: python3 on PATH. */
  python?: string;
  /** The wait before a left-out tool is first described again (doubling, retry.ts). */
  describeRetryMs?: number;
  /** Refuse to start when one tool cannot be described (default: leave it out and say so). */
  strict: boolean;
  /** Tools given after `--`, each an argv. */
  commands: string[][];
  /** How the tools are offered: one MCP tool each, or browse or search mode's two. */
  catalog: CatalogMode;
  /** Search mode's embeddings endpoint (--search-embeddings), if any. */
  searchEmbeddings?: EmbeddingsFlags;
  /** Defaults for every tool that does not set its own: time-outs, limits, warm processes (ADR 0026). */
  defaults: ToolDefaults;
  /** The sandbox the --sandbox* flags ask for (docs/sandbox.md); undefined: none. */
  sandbox?: SandboxPolicy;
  /** Tool processes at once, and calls that may wait for one (both modes). */
  maxConcurrency?: number;
  maxQueue?: number;
  /** Largest JSON-RPC message read from stdin (stdio mode). */
  maxMessageBytes?: number;
  /** Serve over HTTP at this address instead of stdio. */
  http?: HttpPlan;
  /** Serve Prometheus metrics at http://HOST:PORT/metrics (both modes; ADR 0033). */
  metrics?: { host: string; port: number };
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
  /** OAuth 2.1 resource server mode (--auth-issuer); the client file is read by the caller. */
  auth?: AuthPlan;
}

export interface AuthPlan {
  issuer: string;
  resource?: string;
  scopes: string[];
  introspection?: string;
  clientFile?: string;
  toolScopes: boolean;
  jwksCooldownMs?: number;
  /** --auth-introspect-jwt SECONDS: introspect JWTs too, each answer kept this long. */
  introspectJwtSeconds?: number;
  /** --auth-dpop-nonce: DPoP proofs must carry a nonce of this server. */
  dpopNonces: boolean;
}

/** The bridge's own flags beside the toolset's (TOOLSET_OPTIONS), in help order. */
const BRIDGE_OPTIONS = {
  catalog: {
    type: 'string',
    value: 'MODE',
    help: 'how the tools are offered: "tools", one MCP tool per tool (default); "browse", two MCP tools for a large catalog: twylt_list (by category) and twylt_call; or "search", two MCP tools for any catalog: twylt_search (by what a tool does) and twylt_call',
  },
  'describe-retry-ms': {
    type: 'string',
    value: 'MS',
    help: 'wait before a tool left out at start is described again',
    byDefault: DEFAULT_RETRY_MS,
    afterDefault: `; each failed retry doubles it, up to ${MAX_RETRY_MS / 60_000} minutes`,
  },
  'max-output-bytes': {
    type: 'string',
    value: 'N',
    help: "default limit of a tool's stdout and of its stderr",
    byDefault: BUILT_IN_DEFAULTS.maxOutputBytes,
    defaults: (text, option) => ({ maxOutputBytes: parseCount(option, text, 1) }),
  },
  'warm-idle-ms': {
    type: 'string',
    value: 'MS',
    help: 'retire a warm process unused for this long; the next call starts cold and warms the tool again',
    byDefault: BUILT_IN_DEFAULTS.warmIdleMs,
    defaults: (text, option) => ({ warmIdleMs: parseDuration(option, text) }),
  },
  'max-concurrency': {
    type: 'string',
    value: 'N',
    help: 'tool processes at once; further calls wait (default: no limit over stdio, the number of CPUs over HTTP)',
  },
  'max-queue': {
    type: 'string',
    value: 'N',
    help: 'calls that may wait for a slot; beyond, a call is refused with JSON-RPC error -32010 and not run',
    byDefault: DEFAULT_MAX_QUEUE,
  },
  'max-message-bytes': {
    type: 'string',
    value: 'N',
    help: 'stdio: largest JSON-RPC message read; a longer line is answered with error -32600 and skipped',
    byDefault: DEFAULT_MAX_MESSAGE_BYTES,
  },
} as const satisfies Record<string, OptionSpec>;

/** The flags of HTTP mode, in help order. */
const HTTP_OPTIONS = {
  http: {
    type: 'string',
    value: '[HOST:]PORT',
    help: 'serve at http://HOST:PORT/mcp, stateless (default host 127.0.0.1; port 0 picks a free one); GET /healthz needs no token',
  },
  'token-file': {
    type: 'string',
    value: 'FILE',
    help: 'the bearer token clients must send, read from FILE; or set TWYLT_MCP_TOKEN. Required unless HOST is loopback',
  },
  'allow-origin': {
    type: 'string',
    multiple: true,
    value: 'ORIGIN',
    help: 'a browser origin allowed to call (https://app.example.com); requests from other origins get 403; repeatable',
  },
  'allow-host': {
    type: 'string',
    multiple: true,
    value: 'NAME',
    help: 'a Host header value to accept (NAME or NAME:PORT); default: the bound address, or any Host when a token is required; repeatable',
  },
  'max-body-bytes': { type: 'string', value: 'N', help: 'largest request body', byDefault: DEFAULT_MAX_BODY_BYTES },
  'grace-ms': {
    type: 'string',
    value: 'MS',
    help: 'on SIGTERM, how long calls in progress may finish before their tools are killed',
    byDefault: DEFAULT_GRACE_MS,
  },
  'log-input': {
    type: 'boolean',
    help: "put each call's arguments into its log line (they may hold secrets; off by default)",
  },
} as const satisfies Record<string, OptionSpec>;

/** The flags of OAuth 2.1 resource server mode (with --http), in help order. */
const AUTH_OPTIONS = {
  'auth-issuer': {
    type: 'string',
    value: 'URL',
    help: 'accept access tokens of this authorization server (https, or http on loopback); publishes /.well-known/oauth-protected-resource; not with --token-file or TWYLT_MCP_TOKEN',
  },
  'auth-resource': {
    type: 'string',
    value: 'URL',
    help: "this server's URL as clients reach it, which every token's audience must name (default http://HOST:PORT/mcp, on loopback only)",
  },
  'auth-scope': { type: 'string', multiple: true, value: 'SCOPE', help: 'a scope every token must grant; repeatable' },
  'auth-tool-scopes': {
    type: 'boolean',
    help: 'a tool needs the scope tools:NAME or tools:*; tools/list shows a caller only the tools it may call',
  },
  'auth-introspection': { type: 'string', value: 'URL', help: 'check opaque tokens at this RFC 7662 endpoint' },
  'auth-client-file': {
    type: 'string',
    value: 'FILE',
    help: 'the introspection client\'s credentials: {"client_id": "...", "client_secret": "..."}',
  },
  'auth-introspect-jwt': {
    type: 'string',
    value: 'SECONDS',
    help: 'introspect JWTs too, so that a revoked one is refused; each answer is kept SECONDS (0: ask every time)',
  },
  'auth-jwks-cooldown-ms': {
    type: 'string',
    value: 'MS',
    help: "after fetching the issuer's keys, how long a token with an unknown key id waits before it may fetch them again",
    byDefault: DEFAULT_JWKS_COOLDOWN_MS,
    afterDefault: '; meanwhile it is answered 503 with Retry-After',
  },
  'auth-dpop-nonce': {
    type: 'boolean',
    help: 'DPoP proofs must carry a nonce of this server (DPoP-Nonce): a proof replayed to another replica is refused',
  },
} as const satisfies Record<string, OptionSpec>;

/** Every flag that sets the defaults of the tools (and the search flags, which set none). */
const DEFAULTS_OPTIONS = { ...TOOLSET_OPTIONS, ...BRIDGE_OPTIONS };

export const USAGE = `Usage: twylt-mcp [options] -- COMMAND [ARG...] [-- COMMAND [ARG...]]...
       twylt-mcp --config tools.json [options] [-- COMMAND [ARG...]]...
       twylt-mcp --scan DIR [options]
       twylt-mcp --http [HOST:]PORT [options] -- COMMAND [ARG...]...

Serve TWYLT executables as MCP tools, over stdio or, with --http, over MCP's Streamable
HTTP transport. Each "--" starts one tool's command, which runs directly (no shell).
Tools from config files and from the command line are served together; two tools must
not share a name.

Options:
${formatOptions({ ...TOOLSET_OPTIONS, ...BRIDGE_OPTIONS })}  -h, --help               show this help
  -V, --version            show the version

Search mode (--catalog search):
${formatOptions(SEARCH_OPTIONS)}
HTTP mode:
${formatOptions(HTTP_OPTIONS)}
OAuth 2.1 (HTTP mode, instead of a token):
${formatOptions(AUTH_OPTIONS)}
Examples:
  twylt-mcp -- python3 tools/echo/tool.py -- node build/examples/echo/tool.js
  TWYLT_MCP_TOKEN=... twylt-mcp --http 0.0.0.0:8080 --config tools.json
`;

/** Options that only mean something with --http (--auth-issuer included). */
const HTTP_ONLY = [...Object.keys(HTTP_OPTIONS).filter((name) => name !== 'http'), 'auth-issuer'] as (keyof typeof HTTP_OPTIONS | 'auth-issuer')[];
/** Options that only mean something with --auth-issuer. */
const AUTH_ONLY = Object.keys(AUTH_OPTIONS).filter((name) => name !== 'auth-issuer') as Exclude<keyof typeof AUTH_OPTIONS, 'auth-issuer'>[];

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
        ...DEFAULTS_OPTIONS,
        ...SEARCH_OPTIONS,
        ...HTTP_OPTIONS,
        ...AUTH_OPTIONS,
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
    scans: values.scan ?? [],
    workspaces: values.workspaces === undefined ? undefined : resolve(values.workspaces),
    envs: values.envs === undefined ? undefined : resolve(values.envs),
    python: values.python,
    strict: values.strict ?? false,
    commands: split.commands,
    catalog: catalogMode(values.catalog),
    defaults: toolsetOptions(values, DEFAULTS_OPTIONS),
    sandbox: sandboxFromFlags(values, process.cwd()),
    describeRetryMs: duration('--describe-retry-ms', values['describe-retry-ms']),
    maxConcurrency: count('--max-concurrency', values['max-concurrency'], 1),
    maxQueue: count('--max-queue', values['max-queue']),
    maxMessageBytes: count('--max-message-bytes', values['max-message-bytes'], 1),
    metrics: metricsAddress(values.metrics),
    searchEmbeddings: embeddingsFromFlags(values),
  };
  if (plan.catalog !== 'search') {
    const stray = Object.keys(SEARCH_OPTIONS).find((option) => values[option as keyof typeof SEARCH_OPTIONS] !== undefined);
    if (stray) throw new UsageError(`--${stray} needs --catalog search`);
  }
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
      maxBodyBytes: count('--max-body-bytes', values['max-body-bytes'], 1),
      graceMs: duration('--grace-ms', values['grace-ms'], 0),
      logInput: values['log-input'] ?? false,
    };
    if (values['auth-issuer'] !== undefined) {
      if (values['token-file'] !== undefined) throw new UsageError('give either --token-file or --auth-issuer, not both');
      const introspection = values['auth-introspection'];
      const clientFile = values['auth-client-file'];
      if ((introspection === undefined) !== (clientFile === undefined)) throw new UsageError('--auth-introspection and --auth-client-file go together');
      if (values['auth-introspect-jwt'] !== undefined && introspection === undefined) throw new UsageError('--auth-introspect-jwt needs --auth-introspection URL');
      plan.http.auth = {
        issuer: checkedUrl('--auth-issuer', values['auth-issuer'], authServerUrl),
        resource: values['auth-resource'] === undefined ? undefined : checkedUrl('--auth-resource', values['auth-resource'], resourceUrl),
        scopes: values['auth-scope'] ?? [],
        introspection: introspection === undefined ? undefined : checkedUrl('--auth-introspection', introspection, authServerUrl),
        clientFile,
        toolScopes: values['auth-tool-scopes'] ?? false,
        jwksCooldownMs: duration('--auth-jwks-cooldown-ms', values['auth-jwks-cooldown-ms'], 0),
        introspectJwtSeconds: count('--auth-introspect-jwt', values['auth-introspect-jwt'], 0),
        dpopNonces: values['auth-dpop-nonce'] ?? false,
      };
      const scope = plan.http.auth.scopes.find((word) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(word));
      if (scope !== undefined) throw new UsageError(`--auth-scope: ${JSON.stringify(scope)} is not a scope (printable characters, no space, quote or backslash)`);
    } else {
      const stray = AUTH_ONLY.find((option) => values[option] !== undefined);
      if (stray) throw new UsageError(`--${stray} needs --auth-issuer URL`);
    }
  } else {
    const stray = [...HTTP_ONLY, ...AUTH_ONLY].find((option) => values[option] !== undefined);
    if (stray) throw new UsageError(`--${stray} needs --http [HOST:]PORT`);
  }
  if (plan.workspaces !== undefined && plan.scans.length === 0) throw new UsageError('--workspaces DIR is where the tools --scan finds run: give --scan DIR too');
  if (plan.envs !== undefined && plan.scans.length === 0) throw new UsageError('--envs DIR holds the environments of the tools --scan finds: give --scan DIR too');
  if (plan.python !== undefined && plan.scans.length === 0) throw new UsageError('--python is the interpreter of the tools --scan finds: give --scan DIR too');
  if (!plan.help && !plan.version && plan.configs.length === 0 && plan.scans.length === 0 && plan.commands.length === 0) {
    throw new UsageError('no tools given: put "-- COMMAND..." after the options, or use --config FILE or --scan DIR');
  }
  return plan;
}

/** `text` checked by `check` (which throws a RangeError), as a usage error naming the option. */
function checkedUrl(option: string, text: string, check: (text: string) => unknown): string {
  try {
    check(text);
  } catch (error) {
    throw new UsageError(`${option}: ${(error as Error).message}`);
  }
  return text;
}

function catalogMode(text: string | undefined): CatalogMode {
  if (text === undefined) return 'tools';
  const mode = CATALOG_MODES.find((candidate) => candidate === text);
  if (!mode) {
    const quoted = CATALOG_MODES.map((name) => JSON.stringify(name));
    throw new UsageError(`--catalog takes ${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}, got ${JSON.stringify(text)}`);
  }
  return mode;
}

/** An optional flag's milliseconds, by the one rule of every command (parseDuration). */
function duration(option: string, text: string | undefined, min?: number): number | undefined {
  return text === undefined ? undefined : parseDuration(option, text, min);
}

/** An optional flag's whole number (parseCount). */
function count(option: string, text: string | undefined, min?: number): number | undefined {
  return text === undefined ? undefined : parseCount(option, text, min);
}

function origin(text: string): string {
  try {
    return normalizeOrigin(text);
  } catch (error) {
    throw new UsageError(`--allow-origin: ${(error as Error).message}`);
  }
}
