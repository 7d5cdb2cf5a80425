/**
 * Typed failures of a call. Every way a spawned tool can let its caller down has its own
 * class, so a consumer can `instanceof` instead of parsing messages.
 */
import { PROTOCOL_EXIT_CODES } from '../protocol/constants.js';
import type { ErrorObject, Stage } from '../protocol/errors.js';
import type { Issue } from '../protocol/issues.js';

/** What the process left behind; attached to every error raised after a spawn. */
export interface ProcessOutput {
  stdout: string;
  stderr: string;
}

/** Base class of everything the client throws. */
export class TwyltClientError extends Error {
  /** The tool's argv, for messages and logs. */
  readonly command: readonly string[];
  readonly stdout: string;
  readonly stderr: string;

  constructor(message: string, command: readonly string[], output: Partial<ProcessOutput> = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.command = command;
    this.stdout = output.stdout ?? '';
    this.stderr = output.stderr ?? '';
  }
}

/** The command could not be started (not found, not executable, bad cwd). */
export class SpawnError extends TwyltClientError {}

/**
 * The tool exited with one of the protocol's failure codes (2 to 6). `error` is the parsed
 * `{"error": ...}` object when stderr held one; otherwise `stderr` is all there is
 * (for instance with `--error-format human`).
 */
export class ToolError extends TwyltClientError {
  readonly exitCode: number;
  readonly error: ErrorObject | undefined;
  /** From the error object, else inferred from the exit code where that is unambiguous. */
  readonly stage: Stage | undefined;

  constructor(command: readonly string[], exitCode: number, output: ProcessOutput, error: ErrorObject | undefined) {
    const stage = error?.stage ?? STAGE_BY_EXIT[exitCode];
    const detail = error?.exception ? `: ${error.exception.type}: ${error.exception.message}` : '';
    const head = error ? `${error.message}${detail}` : `tool failed: ${firstLine(output.stderr) || 'no error output'}`;
    super(`${head} (exit ${exitCode}${stage ? `, stage ${stage}` : ''})`, command, output);
    this.exitCode = exitCode;
    this.error = error;
    this.stage = stage;
  }

  /** Validation issues, when this is a validation error. */
  get issues(): Issue[] {
    return this.error?.errors ?? [];
  }
}

/** The tool exited with a code the protocol does not define (1, 7, 127...). */
export class UnexpectedExitError extends TwyltClientError {
  readonly exitCode: number;

  constructor(command: readonly string[], exitCode: number, output: ProcessOutput) {
    super(
      `tool exited with ${exitCode}, which is not a TWYLT exit code (${PROTOCOL_EXIT_CODES.join(', ')})` +
        (reasonLine(output.stderr) ? `: ${reasonLine(output.stderr)}` : ''),
      command,
      output,
    );
    this.exitCode = exitCode;
  }
}

/** The tool was ended by a signal it did not get from us (a crash, an outside kill). */
export class ToolCrashError extends TwyltClientError {
  readonly signal: NodeJS.Signals;

  constructor(command: readonly string[], signal: NodeJS.Signals, output: ProcessOutput) {
    super(`tool was killed by ${signal}`, command, output);
    this.signal = signal;
  }
}

/** The call took longer than `timeoutMs`; the tool's whole process group was killed. */
export class TimeoutError extends TwyltClientError {
  readonly timeoutMs: number;

  constructor(command: readonly string[], timeoutMs: number, output: ProcessOutput) {
    super(`tool did not finish within ${timeoutMs} ms and was killed`, command, output);
    this.timeoutMs = timeoutMs;
  }
}

/** The caller's AbortSignal fired; the tool's whole process group was killed. */
export class AbortError extends TwyltClientError {
  constructor(command: readonly string[], reason: unknown, output: ProcessOutput) {
    super('call was aborted', command, output, { cause: reason });
  }
}

/** The resources a sandbox bounds for a tool's process tree. */
export type ResourceLimit = 'memory' | 'processes' | 'cpu_time';

/** Each ResourceLimit as a message names it. */
export const RESOURCE_LIMIT_NAMES: Readonly<Record<ResourceLimit, string>> = { memory: 'memory', processes: 'number of processes', cpu_time: 'CPU time' };

/** The tool reached a resource limit of its sandbox and was stopped; its process group is gone. */
export class ResourceLimitError extends TwyltClientError {
  readonly limit: ResourceLimit;

  constructor(command: readonly string[], limit: ResourceLimit, output: Partial<ProcessOutput> = {}, options?: ErrorOptions) {
    super(`tool reached its sandbox's limit of ${RESOURCE_LIMIT_NAMES[limit]} and was stopped`, command, output, options);
    this.limit = limit;
  }
}

/** stdout or stderr grew past `maxOutputBytes`; the tool was killed. */
export class OutputTooLargeError extends TwyltClientError {
  readonly stream: 'stdout' | 'stderr' | 'output.json';
  readonly limit: number;

  constructor(command: readonly string[], stream: 'stdout' | 'stderr' | 'output.json', limit: number, output: ProcessOutput) {
    // A stream is cut when it passes the limit; output.json is refused unread after the exit.
    super(`tool wrote more than ${limit} bytes to ${stream}${stream === 'output.json' ? '' : ' and was killed'}`, command, output);
    this.stream = stream;
    this.limit = limit;
  }
}

/** Exit 0, but the result (stdout, or output.json in file mode) is not one JSON document. */
export class InvalidOutputError extends TwyltClientError {
  /** Where the bad result came from. */
  readonly source: 'stdout' | 'output.json';

  constructor(command: readonly string[], source: 'stdout' | 'output.json', reason: string, output: ProcessOutput) {
    super(`tool succeeded but its ${source} is not JSON: ${reason}`, command, output);
    this.source = source;
  }
}

/** One failure of a client-side JSON Schema check. */
export interface SchemaIssue {
  /** JSON Pointer into the checked value ('' is the root). */
  path: string;
  message: string;
  /** The JSON Schema keyword that failed (`required`, `type`, `additionalProperties`...). */
  keyword: string;
}

/**
 * Client-side validation against the tool's published schema failed: the input before
 * spawning (`side: 'input'`, nothing was run) or the output after (`side: 'output'`).
 */
export class SchemaMismatchError extends TwyltClientError {
  readonly side: 'input' | 'output';
  readonly issues: SchemaIssue[];
  /** The output that failed (output side only). */
  readonly value: unknown;

  constructor(command: readonly string[], side: 'input' | 'output', issues: SchemaIssue[], value: unknown, output: Partial<ProcessOutput> = {}) {
    const first = issues[0];
    super(
      `${side} does not match the tool's published ${side}Schema` +
        (first ? `: ${first.path || '/'} ${first.message}` : '') +
        (issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''),
      command,
      output,
    );
    this.side = side;
    this.issues = issues;
    this.value = value;
  }
}

/** The stage a failure code implies, for tools that print no parseable error object. */
const STAGE_BY_EXIT: Record<number, Stage | undefined> = { 2: 'input', 3: 'output', 5: 'biz' };

/** How much of one stderr line a message quotes. */
const LINE_CHARS = 300;

/** The first line of a program's output, trimmed to one readable line. */
export function firstLine(text: string): string {
  return text.trim().split('\n', 1)[0]?.slice(0, LINE_CHARS) ?? '';
}

/** A Python traceback's first line; the exception follows its (indented) frames. */
const TRACEBACK = 'Traceback (most recent call last):';

/**
 * A line that starts with an error's name: Node's `Error: ...` and `TypeError [ERR_X]: ...`,
 * Python's `ValueError: ...` or `json.decoder.JSONDecodeError: ...`, `error: ...`, and npm's
 * `npm error ...` (`npm ERR! ...` before npm 10).
 */
const ERROR_NAME = /^(?:[\w$.]*(?:Error|Exception)|error)(?: ?\[[\w-]+\])?:(?:\s|$)|^npm (?:error|ERR!)(?:\s|$)/;

/**
 * Which of the lines of a crashed program's stderr says why, or -1. In this order: a Python
 * traceback's exception (the first unindented line after the last `Traceback` header: the
 * final exception of a chain, whatever its name); the first line that starts with an error's
 * name (ERROR_NAME: Node prints its file name and the throwing source line before it); the
 * first unindented line that mentions an error. Never a stack frame, which is indented.
 */
export function reasonIndex(lines: readonly string[]): number {
  const traceback = lines.findLastIndex((line) => line.startsWith(TRACEBACK));
  const raised = traceback === -1 ? -1 : lines.findIndex((line, i) => i > traceback && /^\S/.test(line));
  if (raised !== -1) return raised;
  const named = lines.findIndex((line) => ERROR_NAME.test(line));
  if (named !== -1) return named;
  return lines.findIndex((line) => /error/i.test(line) && /^\S/.test(line));
}

/** The line of a crashed program's stderr that says why (see reasonIndex), else its first. */
function reasonLine(stderr: string): string {
  const lines = stderr.split('\n');
  return lines[reasonIndex(lines)]?.trim().slice(0, LINE_CHARS) ?? firstLine(stderr);
}
