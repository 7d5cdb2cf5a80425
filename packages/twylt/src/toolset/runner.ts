/**
 * How a consumer runs one entry of a tool set: the run policy every consumer shares
 * (environment, defaults, transport choice, checks against the published schemas).
 */
import { TwyltClient, type CallResult } from '../client/client.js';
import { SchemaMismatchError, type SchemaIssue } from '../client/errors.js';
import type { NumberFidelity } from '../client/json.js';
import type { ToolSpec, Transport } from '../client/types.js';
import { DESCRIBE_KEY } from '../protocol/constants.js';
import type { ToolEntry } from './entry.js';
import { callChannel, traced } from '../events/channels.js';
import { resolvePolicy, type ToolDefaults, type ToolPolicy } from './policy.js';
import { WarmPool } from './warm.js';

/** A call must never turn into a describe request: the key is TWYLT's, refused before any run. */
const RESERVED_DESCRIBE: SchemaIssue = { path: `/${DESCRIBE_KEY}`, message: 'is reserved by TWYLT for describe requests', keyword: 'not' };

/** The consumer's defaults, as createRunner takes them (see ToolDefaults in policy.ts). */
export type RunnerDefaults = ToolDefaults;

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
  /** What every call of this runner runs under, resolved once from the entry and the defaults. */
  readonly policy: ToolPolicy;
  readonly client: TwyltClient;
  /**
   * The `json_spec`, fetched once; `signal` stops a describe still running (its tool is
   * killed), `timeoutMs` overrides the policy's describe time-out.
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
export function createRunner(entry: ToolEntry, defaults: ToolDefaults = {}, spec?: ToolSpec): ToolRunner {
  const policy = resolvePolicy(entry, defaults);
  const { command, cwd, env, timeoutMs, maxOutputBytes, sandbox } = policy;
  const client = new TwyltClient([...command], { cwd, env, timeoutMs, maxOutputBytes, spec, sandbox });
  const warm =
    spec && policy.warm > 0 ? new WarmPool({ size: policy.warm, command, cwd, env, cap: policy.warmCap, idleMs: policy.warmIdleMs, sandbox }) : undefined;
  return {
    entry,
    policy,
    client,
    warm,
    close: () => warm?.close(),
    spec: (options) => client.spec({ signal: options?.signal, timeoutMs: options?.timeoutMs ?? policy.describeTimeoutMs }),
    call(input, options = {}) {
      // Observers name the call by the entry (a configured name, never a caller's text).
      return traced(callChannel, () => ({ tool: entry.name ?? spec?.name ?? client.command[0] ?? '' }), async () => {
        if (Object.hasOwn(input, DESCRIBE_KEY)) throw new SchemaMismatchError(client.command, 'input', [RESERVED_DESCRIBE], undefined);
        return client.call(input, {
          signal: options.signal,
          transport: options.transport ?? policy.transport,
          timeoutMs: options.timeoutMs,
          numbers: options.numbers,
          validate: options.validate ?? true,
          warm,
        });
      });
    },
  };
}
