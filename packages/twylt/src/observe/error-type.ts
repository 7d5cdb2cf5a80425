/** `error.type` of a failed call (ADR 0033): the shared failure vocabulary of twylt/toolset. */
import { describeFailure } from '../toolset/failure.js';

export function errorTypeOf(tool: string, error: unknown): string {
  return describeFailure(tool, error).kind;
}
