/**
 * Integers beyond 2^53 in JSON text (ADR 0021). JSON.parse reads 9007199254740993 as
 * 9007199254740992, another ID, silently: the run refuses such a literal instead. And
 * JSON.stringify writes 2^60 as 1152921504606847000, the shortest text of the double but
 * another integer to a reader with exact integers: results are written with its exact digits.
 * Integers a double holds exactly and every float keep plain JSON semantics.
 */
import type { PathSegment } from './issues.js';

/**
 * A number of this magnitude may stand for a literal that lost digits, or be written by
 * JSON.stringify with digits that name another integer; below it, every integer is exact.
 * The value walks that runs look at each number anyway (the input's quick pass, the result's
 * plain-JSON check) report one, and only then is the text scanned.
 */
export const EXACT_LIMIT = 2 ** 53;

/**
 * Every integer of at most 15 digits is exact as a double, so a text without a run of 16
 * digits needs no scan. A run inside a string or a fraction only costs the scan.
 */
const LONG = 16;

export interface InexactInteger {
  /** The literal as written, and what JSON.parse made of it. */
  literal: string;
  value: number;
  path: PathSegment[];
}

/**
 * The first integer literal in valid JSON `text` that a double cannot hold exactly, with its
 * path; undefined when there is none. Literals beyond double range are not reported here (the
 * transport refuses them as out of range).
 */
export function findInexactInteger(text: string): InexactInteger | undefined {
  if (!hasLongDigitRun(text)) return undefined;
  let found: InexactInteger | undefined;
  scanLongIntegers(text, (start, end, path) => {
    const literal = text.slice(start, end);
    const value = Number(literal);
    if (Number.isSafeInteger(value) || !Number.isFinite(value) || BigInt(value) === BigInt(literal)) return false;
    found = { literal, value, path: path.map((key) => (typeof key === 'string' ? (JSON.parse(key) as string) : key)) };
    return true;
  });
  return found;
}

/**
 * JSON text written by JSON.stringify, with every integer beyond 2^53 written with its exact
 * digits (1152921504606846976 for 2^60, not 1152921504606847000). Numbers of 1e21 and more
 * keep JavaScript's exponent form, as any float.
 */
export function withExactIntegers(text: string): string {
  if (!hasLongDigitRun(text)) return text;
  let out = '';
  let copied = 0;
  scanLongIntegers(text, (start, end) => {
    const exact = BigInt(Number(text.slice(start, end))).toString();
    if (exact.length === end - start && text.startsWith(exact, start)) return false;
    out += text.slice(copied, start) + exact;
    copied = end;
    return false;
  });
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * Calls `visit` with the bounds of each integer literal (no fraction, no exponent) of 16
 * characters or more in valid JSON `text`, outside strings, and the path to it (object keys
 * as their JSON text, decoded only when needed); stops when `visit` returns true.
 */
function scanLongIntegers(text: string, visit: (start: number, end: number, path: (number | string)[]) => boolean): void {
  // One entry per open container: an index in an array, the key's JSON text in an object.
  const path: (number | string)[] = [];
  const inArray: boolean[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (expectKey) {
        path[path.length - 1] = text.slice(i, end);
        expectKey = false;
      }
      i = end;
    } else if (c === MINUS || isDigit(c)) {
      const start = i;
      let integer = true;
      for (i++; i < text.length && isNumberChar(text.charCodeAt(i)); i++) {
        const d = text.charCodeAt(i);
        if (d === DOT || d === LOWER_E || d === UPPER_E) integer = false;
      }
      if (integer && i - start >= LONG && visit(start, i, path)) return;
    } else {
      if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        inArray.push(c === OPEN_BRACKET);
        path.push(0);
        expectKey = c === OPEN_BRACE;
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        inArray.pop();
        path.pop();
        expectKey = false;
      } else if (c === COMMA) {
        if (inArray[inArray.length - 1]) (path[path.length - 1] as number)++;
        else expectKey = true;
      }
      i++;
    }
  }
}

/**
 * Has `text` a run of LONG digits? Every such run covers an index LONG - 1 modulo LONG, so
 * only those are probed: several times quicker than /\d{16}/ on a large payload.
 */
function hasLongDigitRun(text: string): boolean {
  for (let i = LONG - 1; i < text.length; i += LONG) {
    if (!isDigit(text.charCodeAt(i))) continue;
    let start = i;
    while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
    let end = i + 1;
    while (end < text.length && end - start < LONG && isDigit(text.charCodeAt(end))) end++;
    if (end - start >= LONG) return true;
  }
  return false;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

/** The index just past the string that opens at `start`. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  return text.length;
}

function isNumberChar(c: number): boolean {
  return isDigit(c) || c === DOT || c === LOWER_E || c === UPPER_E || c === PLUS || c === MINUS;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
