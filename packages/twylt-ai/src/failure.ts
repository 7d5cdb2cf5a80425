/**
 * Failed calls, written for the model that made them. An agent framework hands the model
 * only the message of what a tool threw, so each message stands alone: which tool, what
 * went wrong, and whether a corrected call can succeed. The client's typed error stays
 * available to the program as `cause`.
 */
import {
  AbortError,
  OutputTooLargeError,
  SchemaMismatchError,
  SpawnError,
  TimeoutError,
  ToolCrashError,
  ToolError,
  TwyltClientError,
  type SchemaIssue,
} from 'twylt/client';
import type { Issue } from 'twylt/protocol';

/**
 * What kind of failure it was:
 * - `invalid_input`: the arguments break the tool's inputSchema or its own checks; a
 *   corrected call can succeed.
 * - `failed`: the tool ran and reported a failure of its own (exit 5).
 * - `denied`: the tool's guardrails refused the call (exit 6).
 * - `timed_out`, `aborted`: the call was stopped; the tool's process tree was killed.
 * - `broken`: the tool could not be started, crashed, or broke the TWYLT protocol or its
 *   own outputSchema; not a fault of the arguments.
 */
export type FailureKind = 'invalid_input' | 'failed' | 'denied' | 'timed_out' | 'aborted' | 'broken';

/** A failed call of a TWYLT tool. `message` is for the model; `cause` is the client's error. */
export class TwyltCallError extends Error {
  readonly toolName: string;
  readonly kind: FailureKind;

  constructor(toolName: string, kind: FailureKind, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'TwyltCallError';
    this.toolName = toolName;
    this.kind = kind;
  }
}

/** How much of a broken tool's stderr a message quotes: enough for the last lines of a trace. */
const STDERR_EXCERPT_CHARS = 1000;

/** One line per issue: `- path: message`. */
export function issueLines(issues: readonly (Issue | SchemaIssue)[]): string {
  return issues.map((issue) => `- ${issue.path || '/'}: ${issue.message}`).join('\n');
}

/** The arguments break the published inputSchema; the tool was not run. */
export function invalidArguments(toolName: string, issues: readonly SchemaIssue[], cause?: unknown): TwyltCallError {
  return new TwyltCallError(
    toolName,
    'invalid_input',
    `Invalid arguments for "${toolName}" (checked against its inputSchema; the tool was not run). Correct them and call it again:\n${issueLines(issues)}`,
    cause,
  );
}

/** Any failure of a call, as a TwyltCallError. */
export function callFailure(toolName: string, error: unknown): TwyltCallError {
  if (error instanceof TwyltCallError) return error;
  const tool = `"${toolName}"`;
  if (error instanceof SchemaMismatchError) {
    if (error.side === 'input') return invalidArguments(toolName, error.issues, error);
    return broken(toolName, `${tool} returned output that does not match its published outputSchema:\n${issueLines(error.issues)}`, error);
  }
  if (error instanceof ToolError) return toolFailure(toolName, error);
  if (error instanceof TimeoutError) {
    return new TwyltCallError(toolName, 'timed_out', `${tool} timed out: it did not finish within ${error.timeoutMs} ms and was stopped.`, error);
  }
  if (error instanceof AbortError) return new TwyltCallError(toolName, 'aborted', `${tool} was cancelled before it finished.`, error);
  if (error instanceof OutputTooLargeError) {
    return broken(toolName, `${tool} wrote more than ${error.limit} bytes to its ${error.stream} and was stopped.`, error);
  }
  if (error instanceof SpawnError) return broken(toolName, `${tool} could not be started: ${error.message}`, error);
  if (error instanceof ToolCrashError) return broken(toolName, `${tool} crashed: it was killed by ${error.signal}.${stderrExcerpt(error.stderr)}`, error);
  if (error instanceof TwyltClientError) {
    // An exit code outside the protocol, stdout that is not JSON.
    return broken(toolName, `${tool} broke the TWYLT protocol: ${error.message}${stderrExcerpt(error.stderr)}`, error);
  }
  return broken(toolName, `${tool} could not be run: ${error instanceof Error ? error.message : String(error)}`, error);
}

/** The tool exited with a protocol failure code (2 to 6). */
function toolFailure(toolName: string, error: ToolError): TwyltCallError {
  const tool = `"${toolName}"`;
  const object = error.error;
  const exception = object?.exception ? `${object.exception.type}: ${object.exception.message}` : undefined;
  const said = exception ?? object?.message ?? (firstLine(error.stderr) || 'no error message');
  switch (error.exitCode) {
    case 2:
      return new TwyltCallError(
        toolName,
        'invalid_input',
        error.issues.length > 0
          ? `${tool} rejected its arguments. Correct them and call it again:\n${issueLines(error.issues)}`
          : `${tool} rejected its arguments: ${said}`,
        error,
      );
    case 5:
      return new TwyltCallError(toolName, 'failed', `${tool} failed: ${said}`, error);
    case 6: {
      const code = object?.code ? ` (${object.code})` : '';
      return new TwyltCallError(toolName, 'denied', `${tool} was denied by its guardrails policy${code}: ${said}`, error);
    }
    case 3:
      return broken(
        toolName,
        error.issues.length > 0
          ? `${tool} produced output that breaks its own outputSchema (a fault of the tool, not of the arguments):\n${issueLines(error.issues)}`
          : `${tool} produced output that breaks its own outputSchema: ${said}`,
        error,
      );
    default:
      // 4: the tool could not read the call, which a well-formed call never causes.
      return broken(toolName, `${tool} broke the TWYLT protocol: it could not read its input (exit ${error.exitCode}): ${said}`, error);
  }
}

function broken(toolName: string, message: string, cause: unknown): TwyltCallError {
  return new TwyltCallError(toolName, 'broken', message, cause);
}

function stderrExcerpt(stderr: string): string {
  const text = stderr.trim();
  if (!text) return '';
  return `\nIts stderr${text.length > STDERR_EXCERPT_CHARS ? ' ends' : ''}:\n${text.length > STDERR_EXCERPT_CHARS ? `...${text.slice(-STDERR_EXCERPT_CHARS)}` : text}`;
}

function firstLine(text: string): string {
  return text.trim().split('\n', 1)[0]?.slice(0, 300) ?? '';
}
