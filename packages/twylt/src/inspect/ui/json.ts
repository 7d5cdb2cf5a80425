/**
 * JSON in the page with every number kept as written: the form and the JSON view hold
 * numbers as their text (`Num`), so an id such as 12345678901234567890 typed in either
 * reaches the tool digit for digit (a JS number would round it to ...168).
 */

/** A JSON number as its text. */
export class Num {
  constructor(readonly text: string) {}
}

export type Json = null | boolean | string | Num | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Num);
}

/** Set a key, `__proto__` included, as an own property. */
export function put(target: JsonObject, key: string, value: Json): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Parse JSON text; throws a SyntaxError worded by the browser for text that is not JSON. */
export function parse(text: string): Json {
  JSON.parse(text); // the browser's own check and message
  return new Reader(text).value();
}

/** The JSON text of `value`, indented by `indent` spaces (0: on one line). */
export function stringify(value: Json, indent = 2): string {
  return write(value, indent, '');
}

function write(value: Json, indent: number, at: string): string {
  if (value instanceof Num) return value.text;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const inner = indent > 0 ? `${at}${' '.repeat(indent)}` : '';
  const [open, sep, close] = indent > 0 ? ['\n', ',\n', `\n${at}`] : ['', ',', ''];
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[${open}${value.map((item) => inner + write(item, indent, inner)).join(sep)}${close}]`;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) return '{}';
  const colon = indent > 0 ? ': ' : ':';
  return `{${open}${keys.map((key) => `${inner}${JSON.stringify(key)}${colon}${write(value[key]!, indent, inner)}`).join(sep)}${close}}`;
}

/** A value from JSON.parse or a schema (plain JS numbers) as a Json value. */
export function fromPlain(value: unknown): Json {
  if (typeof value === 'number') return new Num(JSON.stringify(value));
  if (Array.isArray(value)) return value.map(fromPlain);
  if (typeof value === 'object' && value !== null) {
    const out: JsonObject = {};
    for (const [key, item] of Object.entries(value)) put(out, key, fromPlain(item));
    return out;
  }
  return value as Json;
}

/** Equal as JSON values (numbers by their text). */
export function same(a: Json | undefined, b: Json | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return stringify(a, 0) === stringify(b, 0);
}

/** Reads text that JSON.parse has accepted, so it need not report errors itself. */
class Reader {
  #at = 0;

  constructor(readonly text: string) {}

  value(): Json {
    this.#space();
    const c = this.text[this.#at];
    if (c === '{') return this.#object();
    if (c === '[') return this.#array();
    if (c === '"') return this.#string();
    for (const [word, value] of [['true', true], ['false', false], ['null', null]] as const) {
      if (this.text.startsWith(word, this.#at)) {
        this.#at += word.length;
        return value;
      }
    }
    const number = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    number.lastIndex = this.#at;
    const match = number.exec(this.text)!;
    this.#at += match[0].length;
    return new Num(match[0]);
  }

  #object(): JsonObject {
    const out: JsonObject = {};
    this.#at++;
    this.#space();
    if (this.text[this.#at] === '}') {
      this.#at++;
      return out;
    }
    for (;;) {
      this.#space();
      const key = this.#string();
      this.#space();
      this.#at++; // ':'
      put(out, key, this.value());
      this.#space();
      if (this.text[this.#at++] === '}') return out;
    }
  }

  #array(): Json[] {
    const out: Json[] = [];
    this.#at++;
    this.#space();
    if (this.text[this.#at] === ']') {
      this.#at++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.#space();
      if (this.text[this.#at++] === ']') return out;
    }
  }

  #string(): string {
    const string = /"(?:[^"\\]|\\.)*"/y;
    string.lastIndex = this.#at;
    const match = string.exec(this.text)!;
    this.#at += match[0].length;
    return JSON.parse(match[0]) as string;
  }

  #space(): void {
    while (/[ \t\n\r]/.test(this.text[this.#at] ?? '')) this.#at++;
  }
}
