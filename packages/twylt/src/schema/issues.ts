/**
 * Issue normalization shared by every schema kind: the messages of the codes that carry a
 * limit or a list, the single-failure-per-value rule, and how a failed union is reported.
 * Codes follow docs/TWYLT.md section 4; the wording is ours.
 */
import { fixedIssue, formatPath, issue, type Issue, type PathSegment } from '../protocol/issues.js';

const show = (value: unknown): string => JSON.stringify(value) ?? String(value);
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

function list(values: readonly unknown[], last: string): string {
  const shown = values.map(show);
  return shown.length < 2 ? (shown[0] ?? '') : `${shown.slice(0, -1).join(', ')} ${last} ${shown[shown.length - 1]}`;
}

export type Bound = 'greater_than_equal' | 'greater_than' | 'less_than_equal' | 'less_than';
const BOUND_WORDS: Record<Bound, string> = {
  greater_than_equal: 'greater than or equal to',
  greater_than: 'greater than',
  less_than_equal: 'less than or equal to',
  less_than: 'less than',
};

export const issues = {
  bound: (path: readonly PathSegment[], code: Bound, limit: number, value: unknown) =>
    issue(path, code, `Must be ${BOUND_WORDS[code]} ${limit}`, value),
  multipleOf: (path: readonly PathSegment[], divisor: number, value: unknown) =>
    issue(path, 'multiple_of', `Must be a multiple of ${divisor}`, value),
  stringTooShort: (path: readonly PathSegment[], min: number, value: unknown) =>
    issue(path, 'string_too_short', `Must have at least ${plural(min, 'character')}`, value),
  stringTooLong: (path: readonly PathSegment[], max: number, value: unknown) =>
    issue(path, 'string_too_long', `Must have at most ${plural(max, 'character')}`, value),
  pattern: (path: readonly PathSegment[], pattern: string, value: unknown) =>
    issue(path, 'string_pattern_mismatch', `Must match the pattern /${pattern}/`, value),
  /** A named string format (email, uuid, ...): the code of a pattern failure, a readable message. */
  format: (path: readonly PathSegment[], format: string, value: unknown) =>
    issue(path, 'string_pattern_mismatch', `Must be a valid ${format}`, value),
  tooShort: (path: readonly PathSegment[], min: number, value: unknown) =>
    issue(path, 'too_short', `Must have at least ${plural(min, 'item')}`, value),
  tooLong: (path: readonly PathSegment[], max: number, value: unknown) =>
    issue(path, 'too_long', `Must have at most ${plural(max, 'item')}`, value),
  uniqueItems: (path: readonly PathSegment[], value: unknown) => issue(path, 'unique_items', 'Items must be unique', value),
  literal: (path: readonly PathSegment[], expected: readonly unknown[], value: unknown) =>
    issue(path, 'literal_error', `Expected ${list(expected, 'or')}`, value),
  enumeration: (path: readonly PathSegment[], expected: readonly unknown[], value: unknown) =>
    issue(path, 'enum', `Expected one of: ${expected.map(show).join(', ')}`, value),
  tagInvalid: (path: readonly PathSegment[], key: string, tags: readonly unknown[], value: unknown) =>
    issue(path, 'union_tag_invalid', `Unknown value of the tag field "${key}"; expected ${list(tags, 'or')}`, value),
  tagNotFound: (path: readonly PathSegment[], key: string, value: unknown) =>
    issue(path, 'union_tag_not_found', `The tag field "${key}" is missing`, value),
  noUnionMatch: (path: readonly PathSegment[], value: unknown) =>
    issue(path, 'union_no_match', 'Does not match any of the allowed alternatives', value),
  ambiguousUnion: (path: readonly PathSegment[], value: unknown) =>
    issue(path, 'union_ambiguous', 'Matches more than one of the exclusive alternatives', value),
  invalidKey: (path: readonly PathSegment[], key: string) => issue(path, 'invalid_key', 'Key not allowed here', key),
  notAllowed: (path: readonly PathSegment[], value: unknown) => issue(path, 'value_error', 'Value not allowed here', value),
  custom: (path: readonly PathSegment[], message: string, value: unknown, code = 'value_error') => issue(path, code, message, value),
  /**
   * A JSON type mismatch: the code names the expected type (docs/TWYLT.md section 4). `map` is
   * an object without declared fields (a map or a free-form object): `dict_type`, where a
   * model with fields is `model_type`, as in the reference.
   */
  type: (path: readonly PathSegment[], expected: JsonType | 'map', value: unknown): Issue => {
    switch (expected) {
      case 'integer':
        if (typeof value === 'number' && Number.isFinite(value)) return fixedIssue(path, 'int_from_float', value);
        return typeof value === 'number' ? fixedIssue(path, 'finite_number', value) : fixedIssue(path, 'invalid_integer', value);
      case 'number':
        return fixedIssue(path, typeof value === 'number' ? 'finite_number' : 'invalid_number', value);
      case 'string':
        return fixedIssue(path, 'invalid_string', value);
      case 'boolean':
        return fixedIssue(path, 'invalid_boolean', value);
      case 'object':
        return fixedIssue(path, 'model_type', value);
      case 'map':
        return fixedIssue(path, 'dict_type', value);
      case 'array':
        return fixedIssue(path, 'list_type', value);
      case 'null':
        return fixedIssue(path, 'none_required', value);
    }
  },
};

export type JsonType = 'integer' | 'number' | 'string' | 'boolean' | 'object' | 'array' | 'null';

/**
 * When one value breaks several constraints, only the first in this order is reported
 * (a value gets one issue, as in the reference); type failures always come first.
 */
const CONSTRAINT_ORDER = [
  'greater_than_equal', 'greater_than', 'less_than_equal', 'less_than', 'multiple_of',
  'string_too_short', 'string_too_long', 'string_pattern_mismatch',
  'too_short', 'too_long', 'unique_items',
];
const rank = (code: string): number => {
  const i = CONSTRAINT_ORDER.indexOf(code);
  return i === -1 ? -1 : i;
};

/** Keeps one issue per run of consecutive issues about the same value. */
export function onePerValue(all: Issue[]): Issue[] {
  const out: Issue[] = [];
  for (const current of all) {
    const previous = out[out.length - 1];
    if (previous && previous.path === current.path && rank(previous.code) >= 0 && rank(current.code) >= 0) {
      if (rank(current.code) < rank(previous.code)) out[out.length - 1] = current;
    } else {
      out.push(current);
    }
  }
  return out;
}

/** One alternative of a failed union, as seen by the union's reporter. */
export interface UnionMember {
  /** The alternative's issues, with full paths (already prefixed by the union's path). */
  issues: Issue[];
  /** The alternative accepts only null. */
  nullOnly: boolean;
  /** The alternative accepts only these values (a literal or an enum), if so. */
  literals?: readonly unknown[];
}

/**
 * Reports a union no alternative accepted: a union of literals as one `literal_error`;
 * otherwise the issues of the only alternative that fits the value (null alternatives
 * aside; an alternative fits when the value has its type and fails only on constraints or
 * below the union's path, as Zod decides); otherwise one `union_no_match`.
 */
export function unionIssues(path: readonly PathSegment[], value: unknown, members: readonly UnionMember[]): Issue[] {
  if (members.length > 0 && members.every((m) => m.literals)) {
    return [issues.literal(path, members.flatMap((m) => m.literals ?? []), value)];
  }
  const candidates = value === null ? members : members.filter((m) => !m.nullOnly);
  if (candidates.length === 1) return candidates[0].issues;
  const here = formatPath(path);
  const fitting = candidates.filter((m) => m.issues.every((i) => i.path !== here || rank(i.code) >= 0));
  if (fitting.length === 1) return fitting[0].issues;
  return [issues.noUnionMatch(path, value)];
}
