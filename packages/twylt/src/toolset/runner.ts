/**
 * How a consumer runs one entry of a tool set: the run policy every consumer shares
 * (environment, defaults, transport choice, checks against the published schemas).
 */
import { TwyltClient, type CallResult } from '../client/client.js';
import { resolveCommand } from '../client/command.js';
import { SchemaMismatchError, type SchemaIssue } from '../client/errors.js';
import type { NumberFidelity } from '../client/json.js';
import { DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_MS } from '../client/process.js';
import type { ToolSpec, Transport } from '../client/types.js';
import { DESCRIBE_KEY } from '../protocol/constants.js';
import type { ToolEntry } from './entry.js';
import { entrySandbox } from './sandbox/flags.js';
import type { PreparedSandbox } from './sandbox/bwrap.js';
import { DEFAULT_WARM_IDLE_MS, WarmCap, WarmPool } from './warm.js';

/**
 * The prefix of a consumer's own settings (twylt-mcp's token, its OAuth client credentials):
 * credentials of the consumer, never the tool's, so none is passed on to a tool process.
 */
const CONSUMER_ENV_PREFIX = 'TWYLT_MCP_';

/** A call must never turn into a describe request: the key is TWYLT's, refused before any run. */
const RESERVED_DESCRIBE: SchemaIssue = { path: `/${DESCRIBE_KEY}`, message: 'is reserved by TWYLT for describe requests', keyword: 'not' };

export interface RunnerDefaults {
  timeoutMs?: number;
  maxOutputBytes?: number;
  /** Warm processes of each tool whose entry sets no `warm` (default 0: none; ADR 0026). */
  warm?: number;
  /** Warm processes of all tools together, when no `warmCap` is given (default DEFAULT_MAX_WARM). */
  maxWarm?: number;
  /** The total shared by several runners (describeToolset makes one per set). */
  warmCap?: WarmCap;
  /** Retire a warm process that waited this long unused (default DEFAULT_WARM_IDLE_MS). */
  warmIdleMs?: number;
  /** The consumer's sandbox (prepareSandbox): every entry runs in it unless it says `"sandbox": false`. */
  sandbox?: PreparedSandbox;
}

export interface RunnerCallOptions {
  signal?: AbortSignal;
  /** Overrides the entry's transport for this call. */
  transport?: Transport;
  timeoutMs?: number;
  /** See NumberFidelity; default `value`. */
  numbers?: NumberFidelity;
  /** Check input and output against the published schemas (default true). */
  validate?: boolean;
}

/** What a consumer needs of one tool process. Failures throw the client's typed errors. */
export interface ToolRunner {
  readonly entry: Readonly<ToolEntry>;
  readonly client: TwyltClient;
  /**
   * The `json_spec`, fetched once; `signal` stops a describe still running (its tool is
   * killed), `timeoutMs` overrides the call time-out for it.
   */
  spec(options?: { signal?: AbortSignal; timeoutMs?: number }): Promise<ToolSpec>;
  /** Run the tool on `input`. */
  call(input: Record<string, unknown>, options?: RunnerCallOptions): Promise<CallResult>;
  /** Its warm processes, if it has any (`warm` above 0, and a described tool). */
  readonly warm: WarmPool | undefined;
  /** Retire its warm processes, for good; calls still running go on. */
  close(): void;
}

/**
 * The runner of one entry. Given the tool's `spec` (a tool to serve, not one being
 * described), it starts the entry's warm processes at once.
 */
export function createRunner(entry: ToolEntry, defaults: RunnerDefaults = {}, spec?: ToolSpec): ToolRunner {
  const sandbox = entrySandbox(entry, defaults.sandbox);
  // A file-transport call runs the tool in a fresh directory: a relative script path must
  // not depend on it. What a command finds through PATH is left alone.
  const client = new TwyltClient(resolveCommand(entry.command, entry.cwd ?? process.cwd()), {
    cwd: entry.cwd,
    env: {
      // The consumer's own settings stay with it; what the entry itself sets reaches the tool.
      ...consumerSettings(),
      ...entry.env,
      // The consumer must be able to read every failure, and a call must never turn into a
      // describe request because the consumer itself was started with INPUT_DESCRIBE set.
      TWYLT_ERROR_FORMAT: 'json',
      INPUT_DESCRIBE: undefined,
    },
    timeoutMs: entry.timeoutMs ?? defaults.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxOutputBytes: entry.maxOutputBytes ?? defaults.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    spec,
    sandbox,
  });
  // Only stdin calls take a warm process: an entry set to another transport gets none.
  const size = entry.transport === 'cli' || entry.transport === 'file' ? 0 : (entry.warm ?? defaults.warm ?? 0);
  const warm =
    spec && size > 0
      ? new WarmPool({
          size,
          command: client.command,
          cwd: client.options.cwd,
          env: client.options.env,
          cap: defaults.warmCap ?? new WarmCap(defaults.maxWarm),
          idleMs: defaults.warmIdleMs ?? DEFAULT_WARM_IDLE_MS,
          sandbox,
        })
      : undefined;
  return {
    entry,
    client,
    warm,
    close: () => warm?.close(),
    spec: (options) => client.spec({ signal: options?.signal, timeoutMs: options?.timeoutMs }),
    async call(input, options = {}) {
      if (Object.hasOwn(input, DESCRIBE_KEY)) throw new SchemaMismatchError(client.command, 'input', [RESERVED_DESCRIBE], undefined);
      return client.call(input, {
        signal: options.signal,
        transport: options.transport ?? entry.transport ?? 'auto',
        timeoutMs: options.timeoutMs,
        numbers: options.numbers,
        validate: options.validate ?? true,
        warm,
      });
    },
  };
}

/** Every CONSUMER_ENV_PREFIX variable of this process, each set to undefined (removed). */
function consumerSettings(): Record<string, undefined> {
  return Object.fromEntries(Object.keys(process.env).flatMap((name) => (name.startsWith(CONSUMER_ENV_PREFIX) ? [[name, undefined]] : [])));
}
