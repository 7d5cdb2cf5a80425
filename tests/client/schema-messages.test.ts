/**
 * The consumer-side check's issues (client/schema-messages.ts) in the cases a consumer test
 * does not reach: unions whose alternatives are `$ref`s at the root, nested unions, long
 * values and long lists. What each consumer prints is tested in refusals.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { schemaValidator } from 'twylt/client';

const SHAPES = {
  $defs: {
    Circle: { type: 'object', properties: { kind: { const: 'circle' }, r: { type: 'number', minimum: 0 } }, required: ['kind', 'r'], additionalProperties: false },
    Square: { type: 'object', properties: { kind: { const: 'square' }, side: { type: 'number' } }, required: ['kind', 'side'], additionalProperties: false },
  },
  type: 'object',
  oneOf: [{ $ref: '#/$defs/Circle' }, { $ref: '#/$defs/Square' }],
};

describe('the issues of a failed union', () => {
  it('at the root, through $refs: the one alternative that fits, else a summary', async () => {
    const check = await schemaValidator(SHAPES);
    expect(check({ kind: 'circle', r: -1 })).toEqual([{ path: '/r', message: 'must be at least 0 (got -1)', keyword: 'minimum' }]);
    expect(check({ kind: 'square', side: 'x', extra: 1 })).toEqual([
      { path: '', message: 'has unknown property "extra"; the properties are "kind", "side"', keyword: 'additionalProperties' },
      { path: '/side', message: 'must be a number (got "x")', keyword: 'type' },
    ]);
    expect(check({ kind: 'triangle' })).toEqual([
      { path: '', message: 'must be one of these: an object with "kind": "circle", required "r"; an object with "kind": "square", required "side" (got an object)', keyword: 'oneOf' },
    ]);
  });

  it('keeps the issues of keywords beside the union apart from it', async () => {
    const check = await schemaValidator({ type: 'object', properties: { n: { type: 'integer' }, v: { anyOf: [{ type: 'string' }, { type: 'null' }] } }, required: ['n'] });
    expect(check({ n: 'one', v: 3 })).toEqual([
      { path: '/n', message: 'must be an integer (got "one")', keyword: 'type' },
      { path: '/v', message: 'must be one of these: a string; null (got 3)', keyword: 'anyOf' },
    ]);
  });

  it('a value that matches two alternatives of a oneOf', async () => {
    const check = await schemaValidator({ oneOf: [{ type: 'number' }, { type: 'integer' }] });
    expect(check(3)).toEqual([{ path: '', message: 'matches more than one of the exclusive alternatives (0, 1); it must match exactly one', keyword: 'oneOf' }]);
  });
});

describe('long values and lists', () => {
  it('quotes a refused string up to 60 characters', async () => {
    const check = await schemaValidator({ enum: ['a'] });
    const [issue] = check('x'.repeat(100));
    expect(issue!.message).toBe(`must be one of: "a" (got "${'x'.repeat(55)}...")`);
  });

  it('cuts a list of allowed values at 400 characters, saying how many more', async () => {
    const values = Array.from({ length: 10 }, (_, i) => `${i}${'v'.repeat(59)}`);
    const [issue] = (await schemaValidator({ enum: values }))('x');
    expect(issue!.message).toBe(`must be one of: ${values.slice(0, 6).map((value) => JSON.stringify(value)).join(', ')}, and 4 more (see the schema) (got "x")`);
  });

  it('names all missing properties of one object in one issue, each object apart', async () => {
    const inner = { type: 'object', properties: { x: {}, y: {} }, required: ['x', 'y'] };
    const check = await schemaValidator({ type: 'object', properties: { a: inner, b: inner }, required: ['a', 'b', 'c'] });
    expect(check({ a: {} })).toEqual([
      { path: '', message: 'misses required properties "b", "c"', keyword: 'required' },
      { path: '/a', message: 'misses required properties "x", "y"', keyword: 'required' },
    ]);
  });
});
