/**
 * The policy of one tool's calls, resolved once (ADR 0031): every limit and setting a call
 * of one entry runs under, from the entry and the consumer's defaults, in this one place;
 * TWYLT's own defaults are BUILT_IN_DEFAULTS, here too. Consumers hand their defaults object
 * on by reference; nothing copies its fields, and none resolves a value again: each reads
 * it from the tool's policy (runner.policy), or from resolveLimits for a tool yet to find.
 */
import { resolveCommand } from '../client/command.js';
import { DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_MS } from '../client/process.js';
import type { Transport } from '../client/types.js';
import type { SpawnSandbox } from '../client/spawn.js';
import type { ToolEntry } from './entry.js';
import type { PreparedSandbox } from './sandbox/bwrap.js';
import { entrySandbox } from './sandbox/flags.js';
import { DEFAULT_MAX_WARM, DEFAULT_WARM_IDLE_MS, WarmCap } from './warm.js';

/**
 * The prefix of a consumer's own settings (twylt-mcp's token, its OAuth client credentials):
 * credentials of the consumer, never the tool's, so none is passed on to a tool process.
 */
export const CONSUMER_ENV_PREFIX = 'TWYLT_MCP_';

/**
 * What a consumer sets for every tool that does not set its own (its flags, or the options
 * its code is given). One object per tool set: its warm cap is shared by every runner made
 * with it (warmCapOf), so pass the same object to every describe of the set.
 */
export interface ToolDefaults {
  timeoutMs?: number;
  /** Time-out of a describe (default: the call time-out). */
  describeTimeoutMs?: number;
  maxOutputBytes?: number;
  /** Warm processes of each tool whose entry sets no `warm` (default BUILT_IN_DEFAULTS.warm: none; ADR 0026). */
  warm?: number;
  /** Warm processes of all tools together, when no `warmCap` is given (default BUILT_IN_DEFAULTS.maxWarm). */
  maxWarm?: number;
  /** The total shared by several sets; without it, one per defaults object. */
  warmCap?: WarmCap;
  /** Retire a warm process that waited this long unused (default BUILT_IN_DEFAULTS.warmIdleMs). */
  warmIdleMs?: number;
  /** The consumer's sandbox (prepareSandbox): every tool runs in it unless its entry says `"sandbox": false`. */
  sandbox?: PreparedSandbox;
}

/** What a tool gets when neither its entry nor its consumer's defaults set a value. */
export const BUILT_IN_DEFAULTS = Object.freeze({
  timeoutMs: DEFAULT_TIMEOUT_MS,
  maxOutputBytes: DEFAULT_MAX_OUTPUT_BYTES,
  /** Warm processes of each tool (ADR 0026): none. */
  warm: 0,
  /** Warm processes of all tools together (WarmCap). */
  maxWarm: DEFAULT_MAX_WARM,
  warmIdleMs: DEFAULT_WARM_IDLE_MS,
});

/** The numbers of a policy, resolved. */
export interface ToolLimits {
  readonly timeoutMs: number;
  readonly describeTimeoutMs: number;
  readonly maxOutputBytes: number;
  /** Warm processes of this tool: 0 unless calls can take one (stdin or auto). */
  readonly warm: number;
  readonly warmIdleMs: number;
}

/** The fields of an entry that set its limits. */
export type LimitFields = Pick<ToolEntry, 'timeoutMs' | 'describeTimeoutMs' | 'maxOutputBytes' | 'warm' | 'transport'>;

/**
 * The limits of `entry`: its own first, then `defaults`, then BUILT_IN_DEFAULTS. `{}` gives
 * those of a tool that sets none, such as one a scan is about to find.
 */
export function resolveLimits(entry: LimitFields, defaults: ToolDefaults = {}): ToolLimits {
  const timeoutMs = entry.timeoutMs ?? defaults.timeoutMs ?? BUILT_IN_DEFAULTS.timeoutMs;
  return {
    timeoutMs,
    describeTimeoutMs: entry.describeTimeoutMs ?? defaults.describeTimeoutMs ?? timeoutMs,
    maxOutputBytes: entry.maxOutputBytes ?? defaults.maxOutputBytes ?? BUILT_IN_DEFAULTS.maxOutputBytes,
    // Only stdin calls take a warm process: an entry set to another transport gets none.
    warm: entry.transport === 'cli' || entry.transport === 'file' ? 0 : (entry.warm ?? defaults.warm ?? BUILT_IN_DEFAULTS.warm),
    warmIdleMs: defaults.warmIdleMs ?? BUILT_IN_DEFAULTS.warmIdleMs,
  };
}

/** Everything a call of one entry needs, resolved; frozen. */
export interface ToolPolicy extends ToolLimits {
  /** The argv that runs, a relative script path resolved against `cwd`. */
  readonly command: readonly string[];
  readonly cwd: string | undefined;
  /** What the tool's environment gets over the consumer's (undefined removes a variable). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The entry's transport; `auto`: the CLI argument, stdin for a large input. */
  readonly transport: Transport | 'auto';
  readonly warmCap: WarmCap;
  /** Where its processes start: its sandbox, or undefined for none (docs/sandbox.md). */
  readonly sandbox: SpawnSandbox | undefined;
}

/** The cap of each defaults object without its own: made on first use, shared after. */
const caps = new WeakMap<ToolDefaults, WarmCap>();

/** The warm cap every runner made with `defaults` shares. */
export function warmCapOf(defaults: ToolDefaults): WarmCap {
  if (defaults.warmCap) return defaults.warmCap;
  let cap = caps.get(defaults);
  if (!cap) {
    cap = new WarmCap(defaults.maxWarm ?? BUILT_IN_DEFAULTS.maxWarm);
    caps.set(defaults, cap);
  }
  return cap;
}

/** The policy of `entry`: its own settings first, then `defaults`, then TWYLT's defaults. */
export function resolvePolicy(entry: ToolEntry, defaults: ToolDefaults = {}): ToolPolicy {
  return Object.freeze({
    ...resolveLimits(entry, defaults),
    // A file-transport call runs the tool in a fresh directory: a relative script path must
    // not depend on it. What a command finds through PATH is left alone.
    command: Object.freeze(resolveCommand(entry.command, entry.cwd ?? process.cwd())),
    cwd: entry.cwd,
    env: Object.freeze({
      // The consumer's own settings stay with it; what the entry itself sets reaches the tool.
      ...consumerSettings(),
      ...entry.env,
      // The consumer must be able to read every failure, and a call must never turn into a
      // describe request because the consumer itself was started with INPUT_DESCRIBE set.
      TWYLT_ERROR_FORMAT: 'json',
      INPUT_DESCRIBE: undefined,
    }),
    transport: entry.transport ?? 'auto',
    warmCap: warmCapOf(defaults),
    sandbox: entrySandbox(entry, defaults.sandbox),
  });
}

/** Every CONSUMER_ENV_PREFIX variable of this process, each set to undefined (removed). */
function consumerSettings(): Record<string, undefined> {
  return Object.fromEntries(Object.keys(process.env).flatMap((name) => (name.startsWith(CONSUMER_ENV_PREFIX) ? [[name, undefined]] : [])));
}
