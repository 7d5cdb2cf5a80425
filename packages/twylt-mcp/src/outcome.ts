/** What became of one tools/call, in the terms a log line or a metric needs. */
import {
  AbortError,
  InvalidOutputError,
  OutputTooLargeError,
  SchemaMismatchError,
  TimeoutError,
  ToolCrashError,
  ToolError,
  UnexpectedExitError,
} from 'twylt/client';
import { QueueFullError } from 'twylt/toolset';

/**
 * - `ok`: exit 0 and an output that matches the outputSchema
 * - `tool_error`: the tool failed by the protocol (exit 2 to 6)
 * - `invalid_arguments`: the arguments broke the inputSchema; the tool was not run
 * - `bad_output`: exit 0, but the output is not JSON or breaks the outputSchema, or the tool wrote too much and was killed
 * - `timeout`, `cancelled`: the tool was killed by the bridge
 * - `crashed`: a signal the bridge did not send, or an exit code outside the protocol
 * - `busy`: every slot busy and the queue full; the tool was not run
 * - `not_run`: the tool could not be started, or the call was refused before it
 */
export type CallOutcome = 'ok' | 'tool_error' | 'invalid_arguments' | 'bad_output' | 'timeout' | 'cancelled' | 'crashed' | 'busy' | 'not_run';

/** One finished tools/call. */
export interface CallRecord {
  tool: string;
  outcome: CallOutcome;
  /** From the request's arrival at the handler to its answer, in ms. */
  durationMs: number;
  /** Of that, the time spent waiting for a free slot. */
  queuedMs: number;
  /** The tool's exit code; null when it did not exit by itself (not run, killed, crashed). */
  exitCode: number | null;
  /** The signal that ended a crashed tool. */
  signal?: string;
  /**
   * What went wrong, as a name, never as free text (a tool's message may quote its input):
   * the error object's `type` for a tool_error, else the kind of failure.
   */
  errorType?: string;
  /** The error object's `stage` for a tool_error. */
  stage?: string;
  /** The arguments; a log writes them only when told to (they may hold secrets). */
  input: Record<string, unknown>;
  /** The request's span, when traces are on (ADR 0033). */
  traceId?: string;
  spanId?: string;
}

type Failure = Pick<CallRecord, 'outcome' | 'exitCode' | 'signal' | 'errorType' | 'stage'>;

/** How a call that failed with `error` ended. */
export function outcomeOf(error: unknown): Failure {
  const errorType = error instanceof Error ? error.name : typeof error;
  if (error instanceof ToolError) {
    return { outcome: 'tool_error', exitCode: error.exitCode, errorType: error.error?.type ?? errorType, stage: error.error?.stage ?? error.stage };
  }
  return { ...kindOf(error), errorType };
}

function kindOf(error: unknown): Pick<CallRecord, 'outcome' | 'exitCode' | 'signal'> {
  if (error instanceof SchemaMismatchError) {
    return error.side === 'input' ? { outcome: 'invalid_arguments', exitCode: null } : { outcome: 'bad_output', exitCode: 0 };
  }
  if (error instanceof InvalidOutputError) return { outcome: 'bad_output', exitCode: 0 };
  if (error instanceof OutputTooLargeError) return { outcome: 'bad_output', exitCode: null };
  if (error instanceof TimeoutError) return { outcome: 'timeout', exitCode: null };
  if (error instanceof AbortError) return { outcome: 'cancelled', exitCode: null };
  if (error instanceof ToolCrashError) return { outcome: 'crashed', exitCode: null, signal: error.signal };
  if (error instanceof UnexpectedExitError) return { outcome: 'crashed', exitCode: error.exitCode };
  if (error instanceof QueueFullError) return { outcome: 'busy', exitCode: null };
  return { outcome: 'not_run', exitCode: null };
}
