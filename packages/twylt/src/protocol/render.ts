/** Text forms of results and errors (docs/TWYLT.md sections 2 and 4). Pure: no I/O. */
import { MAX_JSON_DEPTH } from './constants.js';
import type { ErrorObject } from './errors.js';
import { EXACT_LIMIT, withExactIntegers } from './integers.js';

/** Success, describe and error bodies: JSON indented by 2, non-ASCII written as is. */
export function formatJson(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/**
 * A result as `formatJson` writes it, but refusing (TypeError) what plain JSON.stringify
 * would silently change: NaN and Infinity (null), functions and symbols (dropped), holes
 * and undefined in arrays (null), or nothing at all. An undefined property is an absent one.
 * Integers beyond 2^53 are written with their exact digits.
 */
export function formatResult(value: unknown): string {
  const kind = plainJson(value);
  // Without a replacer JSON.stringify takes its fast path: several times quicker on large results.
  const text = (kind === NOT_PLAIN ? JSON.stringify(value, strictJson, 2) : JSON.stringify(value, null, 2)) as string | undefined;
  if (text === undefined) throw new TypeError('the result is not a JSON value');
  return kind === PLAIN ? text : withExactIntegers(text);
}

/** What `plainJson` found: not plain JSON, plain JSON, plain JSON with a number of 2^53 or more. */
const NOT_PLAIN = 0;
const PLAIN = 1;
const PLAIN_LARGE = 2;

/**
 * PLAIN (or PLAIN_LARGE, see EXACT_LIMIT) when `value` is plain JSON, which JSON.stringify
 * writes as is: plain objects and dense arrays without toJSON, strings, finite numbers,
 * booleans, null, at most MAX_JSON_DEPTH deep (cycles included). Anything else, or a getter
 * or proxy that throws, is left to `strictJson`.
 */
function plainJson(value: unknown): number {
  try {
    return plain(value, 1);
  } catch {
    return NOT_PLAIN;
  }
}

function plain(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return PLAIN;
    case 'number':
      return !Number.isFinite(value) ? NOT_PLAIN : Math.abs(value) >= EXACT_LIMIT ? PLAIN_LARGE : PLAIN;
    case 'object':
      break;
    default:
      return NOT_PLAIN;
  }
  if (value === null) return PLAIN;
  if (depth > MAX_JSON_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function') return NOT_PLAIN;
  let found = PLAIN;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = plain(value[i], depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      if (item === PLAIN_LARGE) found = PLAIN_LARGE;
    }
    return found;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    // An undefined property is an absent one, to both ways of writing.
    if (item === undefined) continue;
    const kind = plain(item, depth + 1);
    if (kind === NOT_PLAIN) return NOT_PLAIN;
    if (kind === PLAIN_LARGE) found = PLAIN_LARGE;
  }
  return found;
}

function strictJson(this: unknown, key: string, value: unknown): unknown {
  const at = () => (Array.isArray(this) ? `index ${key}` : key === '' ? 'the result' : `"${key}"`);
  switch (typeof value) {
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${value} at ${at()} is not a JSON number`);
      return value;
    case 'function':
    case 'symbol':
      throw new TypeError(`a ${typeof value} at ${at()} is not a JSON value`);
    case 'undefined':
      if (Array.isArray(this)) throw new TypeError(`undefined at ${at()} is not a JSON value`);
      return value;
    default:
      return value;
  }
}

/** The one stderr line of a JSON-mode failure; offending values JSON cannot carry are shown as text. */
export function renderErrorJson(error: ErrorObject): string {
  return `${JSON.stringify({ error }, jsonSafe())}\n`;
}

/** Issue values deeper than this are cut: JSON.stringify recurses, and the report must be written. */
const MAX_REPORT_DEPTH = 100;

/**
 * A replacer for values that come from untrusted code (issue values): BigInts, NaN and
 * Infinity become strings, cycles, functions and deep nesting become markers, so an error
 * report can always be written, as valid JSON.
 */
function jsonSafe(): (this: unknown, key: string, value: unknown) => unknown {
  const ancestors: unknown[] = [];
  return function (this: unknown, _key, value) {
    if (typeof value === 'bigint') return value.toString();
    if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
    if (typeof value === 'function' || typeof value === 'symbol') return `[${typeof value}]`;
    if (typeof value !== 'object' || value === null) return value;
    // `this` is the object holding `value`: drop ancestors we have left.
    while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
    if (ancestors.includes(value)) return '[Circular]';
    if (ancestors.length >= MAX_REPORT_DEPTH) return '[Too deep]';
    ancestors.push(value);
    return value;
  };
}

/** The human form of a failure. Validation errors follow the reference's layout exactly. */
export function renderErrorHuman(error: ErrorObject): string {
  let out: string;
  if (error.errors) {
    const n = error.errors.length;
    out = `${error.message}\n\n`;
    for (const item of error.errors) out += `  • ${item.path}\n    ${item.message}\n\n`;
    out += `${n} validation error${n === 1 ? '' : 's'}\n`;
  } else {
    out = `${error.message}`;
    if (error.exception) out += `: ${error.exception.type}${error.exception.message ? `: ${error.exception.message}` : ''}`;
    if (error.code) out += ` [${error.code}${error.incident_id ? ` ${error.incident_id}` : ''}]`;
    out += '\n';
  }
  if (error.traceback) out += `\n${error.traceback}\n`;
  return out;
}
