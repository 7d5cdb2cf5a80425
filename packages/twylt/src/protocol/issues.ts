/** Validation issues: codes, standard messages and path rendering (docs/TWYLT.md section 4). */
import { ROOT_PATH } from './constants.js';

export interface Issue {
  path: string;
  code: string;
  message: string;
  value?: unknown;
}

/** Codes consumers rely on, with their fixed messages, plus our messages for the others. */
export const ISSUE_MESSAGES = {
  required: 'Required field is missing',
  unknown_field: 'Unknown field',
  invalid_integer: 'Expected an integer',
  invalid_number: 'Expected a number',
  invalid_boolean: 'Expected a boolean',
  invalid_string: 'Expected a string',
  list_type: 'Expected an array',
  model_type: 'Expected an object',
  /** A map or free-form object (no declared fields): the reference's code and wording. */
  dict_type: 'Input should be a valid dictionary',
  int_from_float: 'Expected an integer, got a number with a fractional part',
  finite_number: 'Expected a finite number',
  none_required: 'Expected null',
} as const;
export type FixedIssueCode = keyof typeof ISSUE_MESSAGES;

export type PathSegment = string | number;

/** `a.b[0].c`; the empty path is `<root>`. */
export function formatPath(path: readonly PathSegment[]): string {
  if (path.length === 0) return ROOT_PATH;
  let out = '';
  path.forEach((segment, i) => {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += i === 0 ? segment : `.${segment}`;
  });
  return out;
}

export function issue(path: readonly PathSegment[], code: string, message: string, value?: unknown): Issue {
  const out: Issue = { path: formatPath(path), code, message };
  if (value !== undefined) out.value = value;
  return out;
}

export function fixedIssue(path: readonly PathSegment[], code: FixedIssueCode, value?: unknown): Issue {
  return issue(path, code, ISSUE_MESSAGES[code], value);
}
