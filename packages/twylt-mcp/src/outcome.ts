/** What became of one tools/call, in the terms a log line or a metric needs. */
import { InvalidOutputError, SchemaMismatchError, ToolCrashError, ToolError, UnexpectedExitError } from 'twylt/client';
import { failureKind, type FailureKind } from 'twylt/toolset';

/**
 * `ok`, or the kind of failure (FailureKind of twylt/toolset: `invalid_input`, `failed`,
 * `denied`, `timeout`, `cancelled`, `limit_exceeded`, `busy`, `broken`), the vocabulary a
 * model's message and a metric's `error.type` share.
 */
export type CallOutcome = 'ok' | FailureKind;

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
  const outcome = failureKind(error);
  const errorType = error instanceof Error ? error.name : typeof error;
  if (error instanceof ToolError) {
    return { outcome, exitCode: error.exitCode, errorType: error.error?.type ?? errorType, stage: error.error?.stage ?? error.stage };
  }
  if (error instanceof UnexpectedExitError) return { outcome, exitCode: error.exitCode, errorType };
  if (error instanceof ToolCrashError) return { outcome, exitCode: null, signal: error.signal, errorType };
  // Exit 0, but what it wrote cannot be served.
  const exitedZero = error instanceof InvalidOutputError || (error instanceof SchemaMismatchError && error.side === 'output');
  return { outcome, exitCode: exitedZero ? 0 : null, errorType };
}
