/**
 * The consumer's JSON Schema check matches `pattern` in linear time (ADR 0017), and means by
 * a pattern what JavaScript does: the engine must agree with RegExp on every input.
 */
import fc from 'fast-check';
import * as re2 from 're2js';
import { describe, expect, it } from 'vitest';
import { linearRegExp } from '../../packages/twylt/src/client/linear-regexp.js';
import { schemaValidator } from '../../packages/twylt/src/client/schema-check.js';

const engine = linearRegExp(re2);

const PATTERNS = [
  '^\\s*$',
  '^\\S+@\\S+$',
  '[\\s,]+',
  '[^\\s]',
  '[\\S]x',
  '^.$',
  '^a.b$',
  '[.]',
  '^[\\w-]{2,8}$',
  '^\\d{3}(-\\d{2})?$',
  '^(?<year>\\d{4})$',
  '^[\\u00e0-\\u00ff]+$',
  '^\\p{L}+$',
  '[\\b]',
  '[^]',
  '\\bword\\b',
  'a|b$',
];

/** Characters where the two engines' sets could differ: JavaScript's white space and line terminators among others. */
const CHARS = ['a', 'b', 'x', 'é', 'Ω', '1', '-', '.', ',', '@', '_', ' ', '\t', '\n', '\r', '\v', '\f', '\b', '\u00a0', '\u1680', '\u2003', '\u2028', '\u2029', '\u202f', '\u3000', '\ufeff', '\u200b', '😀'];

describe('linear-time patterns', () => {
  it('agree with JavaScript RegExp on every input', () => {
    const text = fc.array(fc.constantFrom(...CHARS), { maxLength: 8 }).map((chars) => chars.join(''));
    fc.assert(
      fc.property(fc.constantFrom(...PATTERNS), text, (pattern, input) => {
        expect(engine(pattern, 'u').test(input), `${pattern} on ${JSON.stringify(input)}`).toBe(new RegExp(pattern, 'u').test(input));
      }),
      { numRuns: 3000 },
    );
  });

  it('answer a backtracking-prone pattern at once', async () => {
    const check = await schemaValidator({ type: 'object', properties: { text: { type: 'string', pattern: '^(\\w+\\s?)*$' } } });
    const started = performance.now();
    const issues = check({ text: `${'a'.repeat(5000)}!` });
    expect(performance.now() - started).toBeLessThan(1000);
    // The refused value is quoted, cut to its first characters.
    expect(issues).toEqual([{ path: '/text', message: `must match the pattern /^(\\w+\\s?)*$/ (got "${'a'.repeat(55)}...")`, keyword: 'pattern' }]);
  });

  it('leave a pattern RE2 cannot run to the tool, and still refuse an invalid one', async () => {
    const check = await schemaValidator({ type: 'string', pattern: '^(?=.*\\d)(a)\\1' });
    expect(check('no digit here')).toEqual([]);
    await expect(schemaValidator({ type: 'string', pattern: '(' })).rejects.toThrow(/Invalid regular expression/);
  });

  it('keep patternProperties apart by pattern', async () => {
    const check = await schemaValidator({ type: 'object', patternProperties: { '^n_': { type: 'number' }, '^s_': { type: 'string' } }, additionalProperties: false });
    expect(check({ n_1: 1, s_1: 's' })).toEqual([]);
    expect(check({ n_1: 's', s_1: 1, other: true }).map((issue) => issue.path).sort()).toEqual(['', '/n_1', '/s_1']);
  });

  it('leave a counted repeat over 1000, which RE2 refuses, to the tool', async () => {
    const check = await schemaValidator({ type: 'string', pattern: '^[a-z]{0,5000}$' });
    expect(check('ABC')).toEqual([]);
  });
});

describe('the pattern budget of one validation', () => {
  // 507 instructions: every character costs 507 steps, in linear time still.
  const WIDE = '^[ab]*a[ab]{500}$';
  const noise = (length: number) => `${Array.from({ length }, (_, i) => (i % 3 === 0 ? 'a' : 'b')).join('')}c`;

  it('checks what fits, and leaves a value that would pass it to the tool instead of stalling', async () => {
    const check = await schemaValidator({ type: 'string', pattern: WIDE });
    expect(check(noise(1000))).toEqual([{ path: '', message: `must match the pattern /${WIDE}/ (got "${noise(1000).slice(0, 55)}...")`, keyword: 'pattern' }]);
    // 200 000 characters x 507 > PATTERN_BUDGET: not checked here (the tool checks its input).
    expect(check(noise(200_000))).toEqual([]);
    // The budget is per validation: the next one is checked again.
    expect(check(noise(1000))).toHaveLength(1);
  });

  it('counts every pattern of one value together', async () => {
    const check = await schemaValidator({ type: 'array', items: { type: 'string', pattern: WIDE } });
    expect(check(Array.from({ length: 5 }, () => noise(1000)))).toHaveLength(5);
    // 100 strings within the budget each, beyond it together.
    expect(check(Array.from({ length: 100 }, () => noise(1000)))).toEqual([]);
  });
});
