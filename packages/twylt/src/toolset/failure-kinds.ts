/** The failure vocabulary alone, free of Node's modules: the inspect page's code reads it too. */

/**
 * What kind of failure it was: the one vocabulary of every consumer (a model's message, the
 * bridge's log line, metrics' `error.type`; ADR 0031):
 * - `invalid_input`: the arguments break the tool's inputSchema or its own checks, or hold
 *   what its runtime cannot read (INPUT_FAULTS: an integer beyond 2^53, say); a corrected
 *   call can succeed.
 * - `failed`: the tool ran and reported a failure of its own (exit 5).
 * - `denied`: the tool's guardrails refused the call (exit 6).
 * - `timeout`: the call ran past its time-out; the tool's process tree was killed.
 * - `cancelled`: the caller stopped the call; the tool's process tree was killed.
 * - `limit_exceeded`: the tool reached a resource limit of its sandbox (memory, processes,
 *   CPU time) and was stopped.
 * - `busy`: the consumer ran no tool for the call: every slot busy and its queue full.
 * - `broken`: the tool could not be started, crashed, or broke the TWYLT protocol or its
 *   own outputSchema; not a fault of the arguments.
 */
export type FailureKind = 'invalid_input' | 'failed' | 'denied' | 'timeout' | 'cancelled' | 'limit_exceeded' | 'busy' | 'broken';

/** Every FailureKind, in the order above. */
export const FAILURE_KINDS: readonly FailureKind[] = ['invalid_input', 'failed', 'denied', 'timeout', 'cancelled', 'limit_exceeded', 'busy', 'broken'];
