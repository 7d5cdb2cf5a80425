/** `error.type` of a failed call (ADR 0033): the failure vocabulary every consumer shares. */
import { failureKind } from '../toolset/failure.js';

export function errorTypeOf(error: unknown): string {
  return failureKind(error);
}
