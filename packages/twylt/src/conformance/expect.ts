/**
 * Judging one observed run against the protocol. Each function returns the list of
 * problems found (empty: as the protocol says), in words a tool author can act on.
 */
import { isDeepStrictEqual } from 'node:util';
import { parseErrorObject } from '../client/client.js';
import { KINDS, type ErrorObject, type KindName } from '../protocol/errors.js';
import type { Issue } from '../protocol/issues.js';
import { isRecord } from '../protocol/record.js';
import type { Evidence } from './types.js';

/** Keys of an error object in their protocol order (docs/TWYLT.md section 3). */
const ERROR_KEYS = ['type', 'source', 'stage', 'message', 'errors', 'exception', 'code', 'incident_id', 'original_code', 'traceback'];
const ISSUE_KEYS = ['path', 'code', 'message', 'value'];

export interface ErrorVerdict {
  problems: string[];
  error?: ErrorObject;
}

/** The run ended at all (no time-out, no crash, no oversize output). */
export function runProblems(run: Evidence): string[] {
  if (run.received.failure) return [run.received.failure];
  if (run.received.signal) return [`the tool was killed by ${run.received.signal}`];
  return [];
}

/** A JSON-mode failure of `kind`: its exit code, empty stdout, one JSON error line on stderr. */
export function expectError(run: Evidence, kind: KindName): ErrorVerdict {
  const problems = runProblems(run);
  if (problems.length > 0) return { problems };
  const expected = KINDS[kind];
  const { exitCode, stdout, stderr } = run.received;
  if (exitCode !== expected.exit) problems.push(`exit code ${exitCode}, expected ${expected.exit} (${expected.type}, stage ${expected.stage})`);
  if (stdout !== '') problems.push(`stdout must be empty on failure, got ${preview(stdout)}`);
  const parsed = parseErrorLine(stderr, problems);
  if (!parsed) return { problems };
  for (const key of ['type', 'source', 'stage', 'message'] as const) {
    if (parsed[key] !== expected[key]) problems.push(`error.${key} is ${JSON.stringify(parsed[key])}, expected ${JSON.stringify(expected[key])}`);
  }
  if (expected.type === 'validation_error') {
    if (!Array.isArray(parsed.errors)) problems.push('a validation error needs an "errors" array');
    else parsed.errors.forEach((item, i) => problems.push(...issueProblems(item, `errors[${i}]`)));
  } else if (!isRecord(parsed.exception) || !isDeepStrictEqual(Object.keys(parsed.exception), ['type', 'message'])) {
    problems.push('a protocol or execution error needs "exception": {"type", "message"}');
  } else if (typeof parsed.exception.type !== 'string' || typeof parsed.exception.message !== 'string') {
    problems.push('exception.type and exception.message must be strings');
  }
  return { problems, error: parsed };
}

function parseErrorLine(stderr: string, problems: string[]): ErrorObject | undefined {
  if (!stderr.endsWith('\n') || stderr.indexOf('\n') !== stderr.length - 1) {
    problems.push(`stderr must be exactly one JSON line ending in a newline, got ${preview(stderr)}`);
  }
  let document: unknown;
  try {
    document = JSON.parse(stderr);
  } catch {
    problems.push(`stderr is not one JSON document: ${preview(stderr)}`);
    return undefined;
  }
  if (!isRecord(document) || !isDeepStrictEqual(Object.keys(document), ['error']) || !isRecord(document.error)) {
    problems.push('stderr must hold {"error": {...}} and nothing else');
    return undefined;
  }
  const keys = Object.keys(document.error);
  const unknown = keys.filter((key) => !ERROR_KEYS.includes(key));
  if (unknown.length > 0) problems.push(`error object has keys the protocol does not define: ${unknown.join(', ')}`);
  const known = keys.filter((key) => ERROR_KEYS.includes(key));
  const ordered = [...known].sort((a, b) => ERROR_KEYS.indexOf(a) - ERROR_KEYS.indexOf(b));
  if (!isDeepStrictEqual(known, ordered)) problems.push(`error keys are in the order ${known.join(', ')}; the protocol order is ${ordered.join(', ')}`);
  return document.error as unknown as ErrorObject;
}

function issueProblems(item: unknown, where: string): string[] {
  if (!isRecord(item)) return [`${where} is not an object`];
  const problems: string[] = [];
  const keys = Object.keys(item);
  const expectedOrder = ISSUE_KEYS.filter((key) => keys.includes(key));
  if (!isDeepStrictEqual(keys, expectedOrder)) problems.push(`${where} has keys ${keys.join(', ')}; expected path, code, message[, value] in that order`);
  for (const key of ['path', 'code', 'message']) if (typeof item[key] !== 'string') problems.push(`${where}.${key} must be a string`);
  return problems;
}

/** Exit 0 with one JSON document on stdout, indented by 2 and ended by a newline. */
export function expectJsonOutput(run: Evidence): { problems: string[]; value?: unknown } {
  const problems = runProblems(run);
  if (problems.length > 0) return { problems };
  const { exitCode, stdout, stderr } = run.received;
  if (exitCode !== 0) {
    return { problems: [`exit code ${exitCode}, expected 0${stderr ? `; stderr: ${preview(stderr)}` : ''}`] };
  }
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch {
    return { problems: [`stdout is not one JSON document: ${preview(stdout)}`] };
  }
  if (!stdout.endsWith('\n')) problems.push('stdout must end with a newline');
  const nonEmpty = (isRecord(value) || Array.isArray(value)) && Object.keys(value).length > 0;
  if (nonEmpty && !/^[[{]\n {2}\S/.test(stdout)) problems.push('stdout JSON must be indented by 2 spaces');
  return { problems, value };
}

/** The validation issues of a parsed error, or []. */
export function issuesOf(error: ErrorObject | undefined): Issue[] {
  return Array.isArray(error?.errors) ? error.errors : [];
}

/** Problems when no issue matches path and one of the codes (and the value, when given). */
export function expectIssue(issues: Issue[], path: string, codes: string[], value?: { is: unknown }): string[] {
  const atPath = issues.filter((item) => item.path === path);
  const match = atPath.find((item) => codes.includes(item.code));
  if (!match) {
    const seen = atPath.length > 0 ? `; at ${path} it reported ${atPath.map((item) => item.code).join(', ')}` : `; nothing was reported at ${path}`;
    return [`expected an issue at ${path} with code ${codes.join(' or ')}${seen}`];
  }
  const problems: string[] = [];
  if (value && !isDeepStrictEqual(match.value, value.is)) {
    problems.push(`issue at ${path} has value ${JSON.stringify(match.value)}, expected ${JSON.stringify(value.is)}`);
  }
  return problems;
}

/** A tool's failure in one line: its error object summarised, else its raw stderr. */
export function toolSaid(stderr: string): string {
  const error = parseErrorObject(stderr);
  if (!error) return preview(stderr);
  return `${error.type}: ${error.exception ? `${error.exception.type}: ${error.exception.message}` : error.message}`;
}

export function preview(text: string): string {
  const shown = text.length > 160 ? `${text.slice(0, 160)}…` : text;
  return shown === '' ? '(empty)' : JSON.stringify(shown);
}
