/**
 * Keeps the host's workspace root out of what business errors tell the caller: every
 * mention becomes the virtual `/`.
 */
import { sep } from 'node:path';
import { Fault } from '../protocol/errors.js';

/** Replaces every mention of the host root by the virtual `/`. The root `/` itself is left alone. */
function redactRoot(text: string, root: string): string {
  if (root === sep) return text;
  return text.split(root + sep).join('/').split(root).join('/');
}

/**
 * The thrown value with the root redacted from its message, stack, path fields and causes:
 * an Error is changed in place; a string comes back redacted; anything else as it is.
 */
export function redactError(thrown: unknown, root: string, depth = 0): unknown {
  if (typeof thrown === 'string') return redactRoot(thrown, root);
  if (!(thrown instanceof Error) || depth > 8) return thrown;
  const error = thrown as Error & { path?: unknown; dest?: unknown };
  try {
    error.message = redactRoot(error.message, root);
    if (typeof error.stack === 'string') error.stack = redactRoot(error.stack, root);
    if (typeof error.path === 'string') error.path = redactRoot(error.path, root);
    if (typeof error.dest === 'string') error.dest = redactRoot(error.dest, root);
    if (error.cause !== undefined) error.cause = redactError(error.cause, root, depth + 1);
  } catch {
    // A frozen or hostile error: report a redacted copy of what can be read instead.
    return new Fault(readSafely(() => String(error.name), 'Error'), redactRoot(readSafely(() => String(error.message), ''), root));
  }
  return error;
}

function readSafely(read: () => string, fallback: string): string {
  try {
    return read();
  } catch {
    return fallback;
  }
}
