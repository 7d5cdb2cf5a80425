/**
 * The regular expressions of JSON Schema's `pattern` and `patternProperties`, matched in time
 * linear in the input (RE2's automata, through re2js, in plain JavaScript), so that no
 * argument can stall the process that checks it: JavaScript's own engine backtracks, and
 * `^(\w+\s?)*$` takes seconds on 28 characters (ADR 0017). A validation that would spend
 * more than PATTERN_BUDGET on patterns is not done by the consumer at all.
 *
 * A pattern keeps its ECMA-262 meaning where RE2's differs: `\s`, `\S` and `.` are rewritten
 * to JavaScript's sets. A pattern RE2 cannot run (lookaround, backreferences) is not checked
 * here: it matches everything, and the tool, which checks its own input under its time-out,
 * has the last word.
 */
import type { RE2JS } from 're2js';

/** What Ajv's `code.regExp` option takes (ajv's RegExpEngine). */
export interface RegExpEngine {
  (pattern: string, flags: string): { test(text: string): boolean };
  code: string;
}

/** JavaScript's `\s`: WhiteSpace and LineTerminator (ECMA-262), as class members. */
const SPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
/** Everything else, as class members (for `\S` inside a class). */
const NON_SPACE =
  '\\x00-\\x08\\x0e-\\x1f\\x21-\\x9f\\xa1-\\u167f\\u1681-\\u1fff\\u200b-\\u2027\\u202a-\\u202e\\u2030-\\u205e\\u2060-\\u2fff\\u3001-\\ufefe\\uff00-\\u{10ffff}';
/** JavaScript's `.` without the `s` flag: anything but a line terminator. */
const DOT = '[^\\n\\r\\u2028\\u2029]';

/** Matches everything: the check of a pattern left to the tool. */
const UNCHECKED = { test: () => true };

/**
 * The work one validation may spend on patterns, in characters times program size: linear
 * is not cheap when both are large (`[ab]{500}` over 3 MB took 39 s), and a check runs on
 * the consumer's one thread. About 0.1 s at worst; realistic patterns check megabytes.
 */
export const PATTERN_BUDGET = 10_000_000;
let budget = PATTERN_BUDGET;

/** A validation would pass the budget: the consumer does not check the value; the tool will. */
export class PatternBudgetExceeded extends Error {}

/** Called before each validation (validations are synchronous, so one counter serves all). */
export function resetPatternBudget(): void {
  budget = PATTERN_BUDGET;
}

/** An engine for Ajv over re2js, the module `import('re2js')` gives. */
export function linearRegExp(re2: { RE2JS: typeof RE2JS }): RegExpEngine {
  const engine = (pattern: string, flags: string) => {
    // JavaScript's own parser says whether the pattern is valid (compiling never backtracks),
    // so a broken schema is still reported as one.
    new RegExp(pattern, flags);
    const source = ecmaSets(pattern);
    let compiled: RE2JS | undefined;
    if (source !== undefined) {
      try {
        compiled = re2.RE2JS.compile(re2.RE2JS.translateRegExp(source));
      } catch {
        // Syntax RE2 does not run: left to the tool.
      }
    }
    const size = compiled?.programSize() ?? 0;
    const matcher = compiled ?? UNCHECKED;
    const test = (text: string) => {
      budget -= text.length * size;
      if (budget < 0) throw new PatternBudgetExceeded(`matching /${pattern}/ would pass the budget of a validation`);
      return matcher.test(text);
    };
    // Ajv shares one compiled pattern between schemas by this key.
    return { test, toString: () => `/${pattern}/${flags}` };
  };
  return Object.assign(engine, { code: 'twylt:linearRegExp' });
}

/**
 * `pattern` with `\s`, `\S` and `.` spelt as JavaScript's sets, or undefined for a pattern
 * RE2 would misread (a backreference, an empty class).
 */
function ecmaSets(pattern: string): string | undefined {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === '\\') {
      const next = pattern[i + 1] ?? '';
      i++;
      if (/[1-9k]/.test(next)) return undefined;
      if (next === 's') out += inClass ? SPACE : `[${SPACE}]`;
      else if (next === 'S') out += inClass ? NON_SPACE : `[^${SPACE}]`;
      else if (next === 'b' && inClass) out += '\\x08';
      else out += char + next;
    } else if (inClass) {
      if (char === ']') inClass = false;
      out += char;
    } else if (char === '[') {
      if (pattern[i + 1] === ']') return undefined;
      inClass = true;
      out += char;
      // A leading "^" negates the class; it is no member.
      if (pattern[i + 1] === '^') out += pattern[++i];
    } else {
      out += char === '.' ? DOT : char;
    }
  }
  return out;
}
