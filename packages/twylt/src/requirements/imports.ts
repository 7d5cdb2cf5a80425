/**
 * The module specifiers one JavaScript or TypeScript source imports: static `import` and
 * `export ... from`, `import('x')` and `require('x')` with a literal argument. A small
 * lexer, not a parser: it skips comments, strings, template literals and regular
 * expressions, so that only code is read, and is fast enough for a describe (no parser to
 * load; see ADR 0037). Imports of types only (`import type`, `{ type A }` alone) are marked:
 * they are erased before the code runs.
 */

export interface Imported {
  specifier: string;
  /** Erased before the code runs: `import type ...`, `export type ... from`, or braces of `type` names only. */
  typeOnly: boolean;
}

interface Token {
  kind: 'name' | 'string' | 'punct' | 'other';
  value: string;
}

/** The specifiers `source` imports, in source order (repeats kept). */
export function importsOf(source: string): Imported[] {
  const tokens = lex(source);
  const found: Imported[] = [];
  const at = (i: number): Token | undefined => tokens[i];
  const is = (i: number, kind: Token['kind'], value?: string) => at(i)?.kind === kind && (value === undefined || at(i)!.value === value);
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind !== 'name' || is(i - 1, 'punct', '.')) continue;
    if (token.value === 'require' || token.value === 'import') {
      // require('x'), import('x'), import('x', {with: ...})
      if (is(i + 1, 'punct', '(') && is(i + 2, 'string') && (is(i + 3, 'punct', ')') || (token.value === 'import' && is(i + 3, 'punct', ',')))) {
        found.push({ specifier: at(i + 2)!.value, typeOnly: false });
        continue;
      }
    }
    if (token.value === 'import') {
      if (is(i + 1, 'string')) found.push({ specifier: at(i + 1)!.value, typeOnly: false });
      else {
        // `import type X from` is a type import; `import type from 'x'` imports a default named "type".
        const typeWord = is(i + 1, 'name', 'type') && !is(i + 2, 'punct', ',') && !(is(i + 2, 'name', 'from') && is(i + 3, 'string'));
        const clause = fromClause(tokens, typeWord ? i + 2 : i + 1);
        if (clause) found.push({ specifier: clause.specifier, typeOnly: typeWord || clause.typeOnly });
      }
    } else if (token.value === 'export') {
      const typeWord = is(i + 1, 'name', 'type');
      const start = typeWord ? i + 2 : i + 1;
      if (!is(start, 'punct', '*') && !is(start, 'punct', '{')) continue;
      const clause = fromClause(tokens, start);
      if (clause) found.push({ specifier: clause.specifier, typeOnly: typeWord || clause.typeOnly });
    }
  }
  return found;
}

/**
 * Whether `source` is written as an ES module: a static `import` or `export`, or
 * `import.meta` (Node's module syntax detection, less top-level `await`). TypeScript's
 * CommonJS forms `import x = require('y')` and `export = x` are not.
 */
export function hasModuleSyntax(source: string): boolean {
  const tokens = lex(source);
  return tokens.some((token, i) => {
    if (token.kind !== 'name' || (token.value !== 'import' && token.value !== 'export')) return false;
    const before = tokens[i - 1];
    const next = tokens[i + 1];
    if (before?.kind === 'punct' && before.value === '.') return false; // a property: `x.import`
    if (next?.kind === 'punct' && (next.value === ':' || next.value === '=' || (next.value === '(' && token.value === 'import'))) return false;
    const after = tokens[i + 2];
    return !(token.value === 'import' && next?.kind === 'name' && after?.kind === 'punct' && after.value === '=');
  });
}

/**
 * An import or export clause from `start` (`X, { a, type B as C }`, `* as ns`) up to
 * `from 'x'`: the specifier, and whether its braces import types only. Undefined when the
 * tokens are anything else (`import x = require(...)`, `export { a };`).
 */
function fromClause(tokens: Token[], start: number): { specifier: string; typeOnly: boolean } | undefined {
  let outside = 0;
  const groups: string[][] = [];
  let braces: 'none' | 'open' | 'closed' = 'none';
  for (let i = start; i < tokens.length && i < start + 10_000; i++) {
    const { kind, value } = tokens[i]!;
    if (braces !== 'open' && kind === 'name' && value === 'from' && tokens[i + 1]?.kind === 'string') {
      const typeOnly = outside === 0 && groups.length > 0 && groups.every(isTypeSpecifier);
      return { specifier: tokens[i + 1]!.value, typeOnly };
    }
    // Braces come last: after them only `from` may follow.
    if (braces === 'closed') return undefined;
    if (kind === 'punct' && value === '{' && braces === 'none') {
      braces = 'open';
      groups.push([]);
    } else if (kind === 'punct' && value === '}' && braces === 'open') braces = 'closed';
    else if (braces === 'open' && kind === 'punct' && value === ',') groups.push([]);
    else if (braces === 'open' && (kind === 'name' || kind === 'string')) groups.at(-1)!.push(value);
    // At most `* as ns` or a default name before the braces.
    else if (braces === 'none' && (kind === 'name' || (kind === 'punct' && value === '*')) && ++outside <= 3) continue;
    else if (!(braces === 'none' && kind === 'punct' && value === ',')) return undefined;
  }
  return undefined;
}

/** `type A`, `type A as B`, `type as` import types; `type`, `type as B` import a value named "type". */
function isTypeSpecifier(words: string[]): boolean {
  if (words.length === 0) return true; // a trailing comma's empty group
  return words[0] === 'type' && words.length > 1 && !(words.length === 3 && words[1] === 'as');
}

/** After these words a `/` starts a regular expression; after any other name it divides. */
const BEFORE_EXPRESSION = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await']);
const NAME_START = /[A-Za-z_$#\u0080-\uffff]/;
const NAME_PART = /[\w$\u0080-\uffff]/;

/** The source as names, strings (template literals without substitutions included) and punctuation. */
function lex(source: string): Token[] {
  const tokens: Token[] = [];
  // For each open `{`: whether it is a template's `${`, so that its `}` resumes the template.
  const braces: boolean[] = [];
  const length = source.length;
  let i = 0;

  /** Reads a template's text from `i` (after "`" or a substitution's "}"); true when it ended, false at a "${". */
  const templateText = (): { text: string; ended: boolean } => {
    let text = '';
    while (i < length) {
      const c = source[i]!;
      if (c === '\\') {
        text += source.slice(i, i + 2);
        i += 2;
      } else if (c === '`') {
        i++;
        return { text, ended: true };
      } else if (c === '$' && source[i + 1] === '{') {
        i += 2;
        braces.push(true);
        return { text, ended: false };
      } else {
        text += c;
        i++;
      }
    }
    return { text, ended: true };
  };

  while (i < length) {
    const c = source[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v' || c === '\uFEFF') {
      i++;
    } else if (c === '/' && source[i + 1] === '/') {
      const end = source.indexOf('\n', i);
      i = end === -1 ? length : end;
    } else if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      i = end === -1 ? length : end + 2;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      let text = '';
      while (j < length && source[j] !== c && source[j] !== '\n') {
        if (source[j] === '\\') {
          text += source.slice(j, j + 2);
          j += 2;
        } else text += source[j++];
      }
      tokens.push({ kind: 'string', value: text });
      i = j + 1;
    } else if (c === '`') {
      i++;
      const { text, ended } = templateText();
      tokens.push(ended ? { kind: 'string', value: text } : { kind: 'other', value: '`' });
    } else if (NAME_START.test(c)) {
      let j = i + 1;
      while (j < length && NAME_PART.test(source[j]!)) j++;
      tokens.push({ kind: 'name', value: source.slice(i, j) });
      i = j;
    } else if (c >= '0' && c <= '9') {
      let j = i + 1;
      while (j < length && /[\w.]/.test(source[j]!)) j++;
      tokens.push({ kind: 'other', value: source.slice(i, j) });
      i = j;
    } else if (c === '/' && startsExpression(tokens.at(-1))) {
      i = skipRegExp(source, i);
      tokens.push({ kind: 'other', value: '/re/' });
    } else if (c === '.' && source[i + 1] === '.' && source[i + 2] === '.') {
      tokens.push({ kind: 'punct', value: '...' });
      i += 3;
    } else if (c === '{') {
      braces.push(false);
      tokens.push({ kind: 'punct', value: c });
      i++;
    } else if (c === '}') {
      i++;
      if (braces.pop()) {
        const { ended } = templateText();
        if (ended) tokens.push({ kind: 'other', value: '`' });
      } else tokens.push({ kind: 'punct', value: c });
    } else {
      tokens.push({ kind: 'punct', value: c });
      i++;
    }
  }
  return tokens;
}

/** Whether a `/` after `previous` starts a regular expression rather than dividing. */
function startsExpression(previous: Token | undefined): boolean {
  if (previous === undefined) return true;
  if (previous.kind === 'name') return BEFORE_EXPRESSION.has(previous.value);
  if (previous.kind === 'punct') return previous.value !== ')' && previous.value !== ']' && previous.value !== '}';
  return false;
}

/** The index after a regular expression literal starting at `start` (its flags included); a line end stops it. */
function skipRegExp(source: string, start: number): number {
  let i = start + 1;
  let inClass = false;
  while (i < source.length) {
    const c = source[i]!;
    if (c === '\n') return i;
    if (c === '\\') i += 2;
    else {
      i++;
      if (c === '[') inClass = true;
      else if (c === ']') inClass = false;
      else if (c === '/' && !inClass) break;
    }
  }
  while (i < source.length && NAME_PART.test(source[i]!)) i++;
  return i;
}
