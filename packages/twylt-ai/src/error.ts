/**
 * What a twylt-ai tool throws. An agent framework hands the model only the message of what a
 * tool threw, so the message is the shared description written for models
 * (`describeFailure` in twylt/toolset); the client's typed error stays available to the
 * program as `cause`.
 */
import { describeFailure, type CallFailure, type FailureKind } from 'twylt/toolset';

export type { FailureKind };

/** A failed call of a TWYLT tool. `message` is for the model; `cause` is the client's error. */
export class TwyltCallError extends Error {
  readonly toolName: string;
  readonly kind: FailureKind;

  constructor(toolName: string, failure: CallFailure, cause?: unknown) {
    super(failure.message, cause === undefined ? undefined : { cause });
    this.name = 'TwyltCallError';
    this.toolName = toolName;
    this.kind = failure.kind;
  }
}

/** Any failure of a call, as a TwyltCallError. */
export function callFailure(toolName: string, error: unknown): TwyltCallError {
  return error instanceof TwyltCallError ? error : new TwyltCallError(toolName, describeFailure(toolName, error), error);
}
