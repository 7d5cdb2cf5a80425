/**
 * Reading a tool's JSON without changing its numbers (ADR 0009). A tool in any language may
 * print integers beyond 2^53 or floats written as `1.0` or `1e-07`; `JSON.parse` would turn
 * the first into a neighbouring integer and the others into `1` and `1e-7` on the way back.
 *
 * Numbers that a JavaScript number cannot carry become `JsonNumber`s, which keep the tool's
 * text and write it back unchanged through plain `JSON.stringify` (with `JSON.rawJSON`, which
 * Node 21+ has and Node 20 gets from V8's flag for it, set on first use). Everything else is
 * exactly what `JSON.parse` gives, and a text without a doubtful number is parsed by it alone.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { withExactIntegers } from '../protocol/integers.js';
import { RUNTIME } from '../protocol/runtime.js';

/**
 * What must survive a parse:
 * - `value`: every number's value. A number is a JS number unless that would change its
 *   value (an integer beyond ±(2^53 − 1), a number beyond the double range, a non-zero that
 *   would become 0); those are JsonNumbers.
 * - `text`: every number's text as well. Also `1.0`, `1e-07`, `-0` and `1E3` are JsonNumbers,
 *   so that writing the value again gives the tool's numbers byte for byte.
 */
export type NumberFidelity = 'value' | 'text';

/** A JSON number kept as the text the tool wrote. */
export class JsonNumber {
  /** The number exactly as written (valid JSON number syntax). */
  readonly text: string;

  constructor(text: string) {
    if (!NUMBER_SYNTAX.test(text)) throw new SyntaxError(`not a JSON number: ${JSON.stringify(text)}`);
    this.text = text;
  }

  /** The nearest JavaScript number, so arithmetic and comparisons work (approximately). */
  valueOf(): number {
    return Number(this.text);
  }

  toString(): string {
    return this.text;
  }

  /** The exact integer; throws a RangeError when the text has a fraction or an exponent. */
  toBigInt(): bigint {
    if (!/^-?\d+$/.test(this.text)) throw new RangeError(`${this.text} is not written as an integer`);
    return BigInt(this.text);
  }

  /** `JSON.stringify` writes the original text. */
  toJSON(): unknown {
    return jsonFeatures().rawJSON(this.text);
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `JsonNumber(${this.text})`;
  }
}

/**
 * Parse a tool's JSON output (throws SyntaxError like `JSON.parse`). `value` (the default)
 * keeps every number's value; `text` keeps every number's text too.
 */
export function parseJson(text: string, fidelity: NumberFidelity = 'value'): unknown {
  if (fidelity === 'value') {
    // Parse first: a lost value shows in the result (a magnitude of 2^53 or more, or
    // Infinity), except for an underflow to 0, which the regular expression catches.
    const parsed: unknown = JSON.parse(text);
    if (!TINY.test(text) && !hasLargeNumber(parsed)) return parsed;
  } else if (!DOUBTFUL_TEXT.test(text)) {
    return JSON.parse(text);
  }
  const keep = fidelity === 'text' ? changesText : changesValue;
  const { parseWithSource } = jsonFeatures();
  return parseWithSource(text, (value, source) => (keep(value, source) ? new JsonNumber(source) : value));
}

/**
 * JSON text for a tool's input: a JsonNumber writes its own digits, and a double beyond 2^53
 * its exact ones (2^60, not 1152921504606847000, which names another integer to a tool with
 * exact integers and which a TypeScript tool refuses as inexact).
 */
export function stringifyExact(value: unknown): string {
  if (!hasJsonNumber(value)) return withExactIntegers(JSON.stringify(value));
  const { rawJSON } = jsonFeatures();
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'number' && !Number.isSafeInteger(item) && Number.isInteger(item) && Math.abs(item) < 1e21 ? rawJSON(BigInt(item).toString()) : item,
  );
}

/** True when the value holds a JsonNumber anywhere (a validator would see an object there). */
export function hasJsonNumber(value: unknown): boolean {
  if (value instanceof JsonNumber) return true;
  if (typeof value !== 'object' || value === null) return false;
  for (const item of Array.isArray(value) ? value : Object.values(value)) if (hasJsonNumber(item)) return true;
  return false;
}

const NUMBER_SYNTAX = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * Value fidelity: a number that may have become 0 on the way (a 3-digit negative exponent, or
 * hundreds of zeros after the point). A false alarm (inside a string, say) only costs the
 * slower parse.
 */
const TINY = /\d[eE]-\d{3}|\.0{300}/;

/**
 * Text fidelity: texts that may hold a number JavaScript writes differently: 16 digits (with
 * or without a point among them), any exponent, a fraction ending in 0, six zeros after the
 * point (JavaScript writes 1e-7 where the tool wrote 0.0000001), a negative zero. Without
 * any, every number is a plain decimal of at most 15 significant digits, which a double
 * carries exactly and JavaScript writes back the same way. A false alarm only costs the
 * slower parse.
 */
const DOUBTFUL_TEXT = /\d[\d.]{15}|\d[eE]|\.\d*0(?!\d)|\.0{6}|-0(?![.\d])/;

/** A number of magnitude 2^53 or more (or infinite) anywhere in a parsed value; no recursion. */
function hasLargeNumber(value: unknown): boolean {
  const stack = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'number') {
      if (!(Math.abs(item) < 2 ** 53)) return true;
    } else if (typeof item === 'object' && item !== null) {
      if (Array.isArray(item)) for (let i = 0; i < item.length; i++) stack.push(item[i]);
      else for (const key in item) stack.push((item as Record<string, unknown>)[key]);
    }
  }
  return false;
}

function changesValue(value: number, source: string): boolean {
  if (!Number.isFinite(value)) return true;
  if (value === 0) return /[1-9]/.test(source.replace(/[eE].*$/, ''));
  return /^-?\d+$/.test(source) && !Number.isSafeInteger(value);
}

function changesText(value: number, source: string): boolean {
  return JSON.stringify(value) !== source;
}

interface JsonFeatures {
  rawJSON: (text: string) => unknown;
  parseWithSource: (text: string, number: (value: number, source: string) => unknown) => unknown;
}

let features: JsonFeatures | undefined;

/**
 * `JSON.rawJSON` and the source text of parsed values (a TC39 proposal): native in Node 21+
 * (V8 11.4), Bun and Deno, and taken as they are there. Node 20's V8 has both behind a flag:
 * set it, then take `rawJSON` from a fresh context, where it is installed; the main
 * context's JSON.stringify honours its results.
 */
function jsonFeatures(): JsonFeatures {
  if (features) return features;
  let json = JSON as unknown as { rawJSON?: (text: string) => unknown };
  if (typeof json.rawJSON !== 'function') {
    setFlagsFromString('--harmony-json-parse-with-source');
    json = runInNewContext('JSON') as typeof json;
  }
  const rawJSON = json.rawJSON;
  const probe = JSON.parse('[1.0]', (_key, value, context?: { source?: string }) => (typeof value === 'number' ? context?.source : value)) as unknown[];
  if (typeof rawJSON !== 'function' || probe[0] !== '1.0') {
    throw new Error(`exact JSON numbers need JSON.rawJSON and JSON.parse source text access, which ${RUNTIME} lacks`);
  }
  features = {
    rawJSON,
    parseWithSource: (text, number) =>
      JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
        typeof value === 'number' ? number(value, context!.source!) : value,
      ),
  };
  return features;
}
