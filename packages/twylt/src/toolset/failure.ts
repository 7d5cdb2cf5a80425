/**
 * Failed calls, described for the model that made them: what went wrong, in a message that
 * stands alone (which tool, what happened, whether a corrected call can succeed). Shared by
 * every consumer that hands a failure to a model (twylt-mcp's isError results, twylt-ai's
 * tool errors), so a model reads the same words whichever way it reached the tool.
 */
import {
  AbortError,
  OutputTooLargeError,
  RESOURCE_LIMIT_NAMES,
  ResourceLimitError,
  SchemaMismatchError,
  SpawnError,
  TimeoutError,
  ToolCrashError,
  ToolError,
  TwyltClientError,
  type SchemaIssue,
} from '../client/index.js';
import { firstLine } from '../client/errors.js';
import { QueueFullError } from './limiter.js';
import { isInputFault } from '../protocol/errors.js';
import type { Issue } from '../protocol/issues.js';
import type { FailureKind } from './failure-kinds.js';

export { FAILURE_KINDS, type FailureKind } from './failure-kinds.js';

/** A failure as a model should read it. */
export interface CallFailure {
  kind: FailureKind;
  message: string;
}

/** How much of a broken tool's stderr a message quotes: enough for the last lines of a trace. */
const STDERR_EXCERPT_CHARS = 1000;

/** One line per issue: `- path: message`. */
export function issueLines(issues: readonly (Issue | SchemaIssue)[]): string {
  return issues.map((issue) => `- ${issue.path || '/'}: ${issue.message}`).join('\n');
}

/** The arguments break the published inputSchema; the tool was not run. */
export function invalidArguments(toolName: string, issues: readonly SchemaIssue[]): CallFailure {
  return {
    kind: 'invalid_input',
    message: `Invalid arguments for "${toolName}" (checked against its inputSchema; the tool was not run). Correct them and call it again:\n${issueLines(issues)}`,
  };
}

/**
 * The kind of any failure of a call: the client's typed errors; an error that wraps one (a
 * describe that failed, a framework's tool error) has the kind of its `cause`.
 */
export function failureKind(error: unknown): FailureKind {
  return describeFailure('', error).kind;
}

/** Any failure of a call (the client's typed errors, or anything else thrown), for a model. */
export function describeFailure(toolName: string, thrown: unknown): CallFailure {
  const tool = `"${toolName}"`;
  const error = typedFailure(thrown);
  if (error instanceof SchemaMismatchError) {
    if (error.side === 'input') return invalidArguments(toolName, error.issues);
    return broken(`${tool} returned output that does not match its published outputSchema:\n${issueLines(error.issues)}`);
  }
  if (error instanceof ToolError) return toolFailure(tool, error);
  if (error instanceof TimeoutError) return { kind: 'timeout', message: `${tool} timed out: it did not finish within ${error.timeoutMs} ms and was stopped.` };
  if (error instanceof AbortError) return { kind: 'cancelled', message: `${tool} was cancelled before it finished.` };
  if (error instanceof ResourceLimitError) {
    return {
      kind: 'limit_exceeded',
      message: `${tool} was stopped: it reached the limit of ${RESOURCE_LIMIT_NAMES[error.limit]} its sandbox allows. The same call would fail again; a smaller input may succeed.`,
    };
  }
  if (error instanceof QueueFullError) return { kind: 'busy', message: `${tool} was not run: too many calls are running or waiting. Try again later.` };
  if (error instanceof OutputTooLargeError) return broken(`${tool} wrote more than ${error.limit} bytes to its ${error.stream}${error.stream === 'output.json' ? ', which was not read' : ' and was stopped'}.`);
  if (error instanceof SpawnError) return broken(`${tool} could not be started: ${error.message}`);
  if (error instanceof ToolCrashError) return broken(`${tool} crashed: it was killed by ${error.signal}.${stderrExcerpt(error.stderr)}`);
  // An exit code outside the protocol, stdout that is not JSON.
  if (error instanceof TwyltClientError) return broken(`${tool} broke the TWYLT protocol: ${error.message}${stderrExcerpt(error.stderr)}`);
  // An AbortSignal's own reason, as a call waiting for a slot is rejected with.
  if (error instanceof Error && error.name === 'AbortError') return { kind: 'cancelled', message: `${tool} was cancelled before it started.` };
  return broken(`${tool} could not be run: ${error instanceof Error ? error.message : String(error)}`);
}

/** The tool exited with a protocol failure code (2 to 6). */
function toolFailure(tool: string, error: ToolError): CallFailure {
  const object = error.error;
  const exception = object?.exception ? `${object.exception.type}: ${object.exception.message}` : undefined;
  const said = exception ?? object?.message ?? (firstLine(error.stderr) || 'no error message');
  switch (error.exitCode) {
    case 2:
      return {
        kind: 'invalid_input',
        message:
          error.issues.length > 0
            ? `${tool} rejected its arguments. Correct them and call it again:\n${issueLines(error.issues)}`
            : `${tool} rejected its arguments: ${said}`,
      };
    case 5:
      return { kind: 'failed', message: `${tool} failed: ${said}` };
    case 6:
      return { kind: 'denied', message: `${tool} was denied by its guardrails policy${object?.code ? ` (${object.code})` : ''}: ${said}` };
    case 3:
      return broken(
        error.issues.length > 0
          ? `${tool} produced output that breaks its own outputSchema (a fault of the tool, not of the arguments):\n${issueLines(error.issues)}`
          : `${tool} produced output that breaks its own outputSchema: ${said}`,
      );
    default:
      // 4 caused by what the arguments hold: the model can send them another way.
      if (object?.stage === 'transport' && isInputFault(object.exception?.type)) {
        return { kind: 'invalid_input', message: `${tool} cannot read its arguments as they are. Change them and call it again: ${said}` };
      }
      // 4 otherwise: the tool could not read the call, which a well-formed call never causes.
      return broken(`${tool} broke the TWYLT protocol: it could not read its input (exit ${error.exitCode}): ${said}`);
  }
}

/** How many wrappers deep a typed failure is looked for (a cycle of causes ends there). */
const MAX_CAUSE_DEPTH = 8;

/**
 * The error, or the first of its causes that is a typed failure: a wrapper (a describe that
 * failed, a framework's tool error) says no more than what it wraps.
 */
function typedFailure(error: unknown): unknown {
  let at = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && at instanceof Error; depth++) {
    if (at instanceof TwyltClientError || at instanceof QueueFullError) return at;
    at = at.cause;
  }
  return error;
}

function broken(message: string): CallFailure {
  return { kind: 'broken', message };
}

function stderrExcerpt(stderr: string): string {
  const text = stderr.trim();
  if (!text) return '';
  const long = text.length > STDERR_EXCERPT_CHARS;
  return `\nIts stderr${long ? ' ends' : ''}:\n${long ? `...${text.slice(-STDERR_EXCERPT_CHARS)}` : text}`;
}

