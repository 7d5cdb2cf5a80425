/**
 * The issues both the Zod and the JSON Schema adapter must give for the same constraint
 * violations: same codes, same messages, same order (declaration order of the fields).
 */
export const BOUND_ISSUES = [
  { path: 'gte', code: 'greater_than_equal', message: 'Must be greater than or equal to 1', value: 0 },
  { path: 'gt', code: 'greater_than', message: 'Must be greater than 1', value: 1 },
  { path: 'lte', code: 'less_than_equal', message: 'Must be less than or equal to 1', value: 2 },
  { path: 'lt', code: 'less_than', message: 'Must be less than 1', value: 1 },
  { path: 'mul', code: 'multiple_of', message: 'Must be a multiple of 5', value: 7 },
  { path: 'short', code: 'string_too_short', message: 'Must have at least 2 characters', value: 'a' },
  { path: 'long', code: 'string_too_long', message: 'Must have at most 2 characters', value: 'abc' },
  { path: 'pat', code: 'string_pattern_mismatch', message: 'Must match the pattern /^a+$/', value: 'b' },
  { path: 'few', code: 'too_short', message: 'Must have at least 1 item', value: [] },
  { path: 'many', code: 'too_long', message: 'Must have at most 1 item', value: [1, 2] },
];

export const LITERAL_ISSUES = [
  { path: 'lit', code: 'literal_error', message: 'Expected "on"', value: 'off' },
  { path: 'en', code: 'enum', message: 'Expected one of: "red", "green"', value: 'blue' },
];
