/** Plain JSON Schema: the hand-written validator's keywords, issues, defaults, closing and refusals. */
import { describe, expect, it } from 'vitest';
import { adaptSchema, publishSchema, SchemaError } from '../../packages/twylt/src/schema/index.js';
import { BOUND_ISSUES, LITERAL_ISSUES } from './support/constraint-issues.js';
import { accepted, codesOf, issuesOf } from './support/helpers.js';
import { probeJsonSchema } from './support/probes.js';

const object = (properties: Record<string, unknown>, required: string[] = Object.keys(properties), extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  required,
  ...extra,
});

describe('JSON Schema issues (same codes and order as the Zod path)', () => {
  it('reports required with the parent object, unknown fields last in input order, nested inline', async () => {
    const schema = object({ a: { type: 'string' }, b: object({ c: { type: 'integer' } }) });
    expect(await issuesOf(schema, { zz: 1, b: { c: 1.5, q: 'x' }, yy: 2 })).toEqual([
      { path: 'a', code: 'required', message: 'Required field is missing', value: { zz: 1, b: { c: 1.5, q: 'x' }, yy: 2 } },
      { path: 'b.c', code: 'int_from_float', message: 'Expected an integer, got a number with a fractional part', value: 1.5 },
      { path: 'b.q', code: 'unknown_field', message: 'Unknown field', value: 'x' },
      { path: 'zz', code: 'unknown_field', message: 'Unknown field', value: 1 },
      { path: 'yy', code: 'unknown_field', message: 'Unknown field', value: 2 },
    ]);
  });

  it('maps types, null included, and type arrays', async () => {
    const schema = object({
      i: { type: 'integer' },
      n: { type: 'number' },
      b: { type: 'boolean' },
      s: { type: 'string' },
      o: { type: 'object' },
      l: { type: 'array' },
      nul: { type: 'null' },
      maybe: { type: ['integer', 'null'] },
      either: { type: ['string', 'boolean'] },
      num: { type: ['integer', 'number'] },
    });
    const value = { i: null, n: '1', b: 1, s: null, o: [], l: {}, nul: false, maybe: 'x', either: 1, num: 'x' };
    expect(await codesOf(schema, value)).toEqual([
      ['i', 'invalid_integer'],
      ['n', 'invalid_number'],
      ['b', 'invalid_boolean'],
      ['s', 'invalid_string'],
      ['o', 'model_type'],
      ['l', 'list_type'],
      ['nul', 'none_required'],
      ['maybe', 'invalid_integer'],
      ['either', 'union_no_match'],
      ['num', 'invalid_number'],
    ]);
    expect(await codesOf(schema, 'text')).toEqual([['<root>', 'model_type']]);
  });

  it('maps bounds, lengths, patterns, multiples, sizes, uniqueness, const and enum with the Zod messages', async () => {
    const schema = object({
      gte: { minimum: 1 },
      gt: { exclusiveMinimum: 1 },
      lte: { maximum: 1 },
      lt: { exclusiveMaximum: 1 },
      mul: { multipleOf: 5 },
      short: { minLength: 2 },
      long: { maxLength: 2 },
      pat: { pattern: '^a+$' },
      few: { minItems: 1 },
      many: { maxItems: 1 },
      uniq: { uniqueItems: true },
      lit: { const: 'on' },
      en: { enum: ['red', 'green'] },
    });
    const value = { gte: 0, gt: 1, lte: 2, lt: 1, mul: 7, short: 'a', long: 'abc', pat: 'b', few: [], many: [1, 2], uniq: [{ a: 1 }, { a: 1 }], lit: 'off', en: 'blue' };
    expect(await issuesOf(schema, value)).toEqual([
      ...BOUND_ISSUES,
      { path: 'uniq', code: 'unique_items', message: 'Items must be unique', value: [{ a: 1 }, { a: 1 }] },
      ...LITERAL_ISSUES,
    ]);
  });

  it('counts code points and matches patterns with unicode semantics', async () => {
    const schema = object({ s: { type: 'string', maxLength: 2 }, word: { type: 'string', pattern: '^\\p{L}+$' } });
    expect(await issuesOf(schema, { s: '😀😀', word: 'Grüße' })).toEqual([]);
    expect(await codesOf(schema, { s: '😀😀😀', word: 'a1' })).toEqual([
      ['s', 'string_too_long'],
      ['word', 'string_pattern_mismatch'],
    ]);
  });

  it('words a failing pattern by the standard format beside it', async () => {
    const schema = object({ e: { type: 'string', format: 'email', pattern: '^[^@]+@[^@]+$' }, c: { type: 'string', format: 'custom', pattern: '^c$' } });
    expect(await issuesOf(schema, { e: 'nope', c: 'd' })).toEqual([
      { path: 'e', code: 'string_pattern_mismatch', message: 'Must be a valid email', value: 'nope' },
      { path: 'c', code: 'string_pattern_mismatch', message: 'Must match the pattern /^c$/', value: 'd' },
    ]);
  });

  it('reports one issue per value, and array sizes only when the items are fine', async () => {
    const schema = object({ s: { type: 'string', minLength: 3, pattern: '^[a-z]+$' }, l: { type: 'array', items: { type: 'integer' }, minItems: 3 } });
    expect(await codesOf(schema, { s: 'A', l: ['x'] })).toEqual([
      ['s', 'string_too_short'],
      ['l[0]', 'invalid_integer'],
    ]);
  });

  it('validates tuples (prefixItems, items: false)', async () => {
    const schema = object({ pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'boolean' }], items: false } });
    expect(await codesOf(schema, { pair: ['a', 1, 2] })).toEqual([
      ['pair[1]', 'invalid_boolean'],
      ['pair', 'too_long'],
    ]);
    expect(await issuesOf(schema, { pair: ['a', true] })).toEqual([]);
  });

  it('reports unions like the Zod path: literals, nullable, implicit tags, fitting alternative, no match', async () => {
    const shape = {
      oneOf: [object({ kind: { const: 'a' }, x: { type: 'integer' } }), object({ kind: { const: 'b' } })],
    };
    const schema = object({
      level: { anyOf: [{ const: 'low' }, { const: 'high' }] },
      maybe: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
      shape,
      missingTag: shape,
      inner: shape,
      either: { anyOf: [{ type: 'string' }, { type: 'boolean' }] },
      fits: { anyOf: [{ type: 'string' }, object({ x: { type: 'number' }, y: { type: 'number' } })] },
      bounded: { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'string' }] },
    });
    const value = { level: 'mid', maybe: 'x', shape: { kind: 'c' }, missingTag: { x: 1 }, inner: { kind: 'a', x: 'no' }, either: 1, fits: { x: 1 }, bounded: -1 };
    expect(await issuesOf(schema, value)).toEqual([
      { path: 'level', code: 'literal_error', message: 'Expected "low" or "high"', value: 'mid' },
      { path: 'maybe', code: 'invalid_integer', message: 'Expected an integer', value: 'x' },
      { path: 'shape', code: 'union_tag_invalid', message: 'Unknown value of the tag field "kind"; expected "a" or "b"', value: { kind: 'c' } },
      { path: 'missingTag', code: 'union_tag_not_found', message: 'The tag field "kind" is missing', value: { x: 1 } },
      { path: 'inner.x', code: 'invalid_integer', message: 'Expected an integer', value: 'no' },
      { path: 'either', code: 'union_no_match', message: 'Does not match any of the allowed alternatives', value: 1 },
      { path: 'fits.y', code: 'required', message: 'Required field is missing', value: { x: 1 } },
      { path: 'bounded', code: 'greater_than_equal', message: 'Must be greater than or equal to 0', value: -1 },
    ]);
  });

  it('reports a value matching several oneOf alternatives', async () => {
    expect(await codesOf({ oneOf: [{ type: 'integer' }, { minimum: 0 }] }, 3)).toEqual([['<root>', 'union_ambiguous']]);
  });

  it('applies allOf, not and false schemas', async () => {
    expect(await codesOf({ allOf: [{ type: 'integer' }, { minimum: 2 }] }, 1)).toEqual([['<root>', 'greater_than_equal']]);
    expect(await codesOf({ not: { const: 'x' } }, 'x')).toEqual([['<root>', 'value_error']]);
    expect(await codesOf(object({ a: false }, []), { a: 1 })).toEqual([['a', 'value_error']]);
  });

  it('follows $ref to $defs, definitions and the root', async () => {
    const schema = {
      $defs: { n: { type: 'integer' } },
      definitions: { s: { type: 'string' } },
      type: 'object',
      properties: { n: { $ref: '#/$defs/n' }, s: { $ref: '#/definitions/s' }, child: { $ref: '#' } },
    };
    expect(await codesOf(schema, { n: 'x', s: 1, child: { n: 1.5, q: 1 } })).toEqual([
      ['n', 'invalid_integer'],
      ['s', 'invalid_string'],
      ['child.n', 'int_from_float'],
      ['child.q', 'unknown_field'],
    ]);
  });

  it('keeps maps open through additionalProperties schemas and checks propertyNames', async () => {
    const schema = object({ m: { type: 'object', propertyNames: { maxLength: 2 }, additionalProperties: { type: 'integer' } } });
    expect(await codesOf(schema, { m: { ab: 1, abc: 2, c: 'x' } })).toEqual([
      ['m.abc', 'invalid_key'],
      ['m.c', 'invalid_integer'],
    ]);
  });
});

describe('JSON Schema values', () => {
  it('applies defaults (copies, not shared), returns declared fields in declaration order', async () => {
    const schema = object({ a: { type: 'string' }, list: { type: 'array', default: [] }, mode: { enum: ['x', 'y'], default: 'x' } }, ['a']);
    const first = (await accepted(schema, { a: 'v' })) as { list: unknown[] };
    expect(JSON.stringify(first)).toBe('{"a":"v","list":[],"mode":"x"}');
    first.list.push(1);
    expect(await accepted(schema, { mode: 'y', a: 'w' })).toEqual({ a: 'w', list: [], mode: 'y' });
    expect(JSON.stringify(await accepted(probeJsonSchema, { point: { y: 1, x: 2 }, kind: 'probe', count: 1, name: 'n', tags: [{ label: 'a' }] }))).toBe(
      '{"name":"n","count":1,"mode":"safe","kind":"probe","verbose":false,"point":{"x":2,"y":1},"tags":[{"label":"a","weight":1}]}',
    );
  });
});

describe('JSON Schema publication', () => {
  it('closes every object schema in a copy, keeps the rest, and leaves the author\'s schema alone', async () => {
    const authored = structuredClone(probeJsonSchema);
    const published = publishSchema(await adaptSchema(authored, 'input'), { name: 'Probe', version: '1.0.0' });
    expect(authored).toEqual(probeJsonSchema);
    expect(published.additionalProperties).toBe(false);
    const defs = published.$defs as Record<string, Record<string, unknown>>;
    expect(defs.point.additionalProperties).toBe(false);
    expect(defs.tag.additionalProperties).toBe(false);
    expect(defs.coordinate).not.toHaveProperty('additionalProperties');
    expect(published['x-twylt-example']).toBe('probe');
    expect((published.properties as Record<string, unknown>).name).toEqual(probeJsonSchema.properties.name);
    expect(Object.keys(published).slice(-2)).toEqual(['$id', 'x-schema-version']);
  });

  it('keeps an explicit additionalProperties and moves a declared $id last', async () => {
    const schema = { $id: 'old', type: 'object', additionalProperties: { type: 'string' }, description: 'd' };
    const published = publishSchema(await adaptSchema(schema, 'input'), { name: 'new' });
    expect(published.additionalProperties).toEqual({ type: 'string' });
    expect(Object.keys(published)).toEqual(['type', 'additionalProperties', 'description', '$id']);
    expect(published.$id).toBe('new');
  });
});

describe('JSON Schema keywords outside the subset are refused when adapted', () => {
  const refused: Array<[string, unknown, RegExp]> = [
    ['patternProperties', { type: 'object', patternProperties: { '^a': {} } }, /"patternProperties" is not supported/],
    // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword under test
    ['if/then', { if: { type: 'string' }, then: { minLength: 1 } }, /"if" is not supported/],
    ['unevaluatedProperties', { type: 'object', unevaluatedProperties: false }, /"unevaluatedProperties"/],
    ['OpenAPI nullable', { type: 'string', nullable: true }, /"nullable"/],
    ['nested, deep', object({ a: object({ b: { type: 'string', contains: {} } }) }), /#\/properties\/a\/properties\/b\/contains/],
    ['remote $ref', { $ref: 'https://example.com/s.json' }, /only local references/],
    ['broken $ref', { $ref: '#/$defs/missing' }, /cannot resolve/],
    ['malformed $ref', { $defs: { a: {} }, $ref: '#/$defs/%' }, /cannot resolve/],
    ['draft-07 tuple items', { type: 'array', items: [{ type: 'string' }] }, /prefixItems/],
    ['draft-04 exclusiveMinimum', { type: 'number', minimum: 0, exclusiveMinimum: true }, /draft-04/],
    ['nested $id', object({ a: { $id: 'x', type: 'string' } }), /only supported on the root/],
    ['allOf of objects', { allOf: [object({ a: {} }), object({ b: {} })] }, /allOf cannot be closed/],
    ['bad pattern', { type: 'string', pattern: '(' }, /invalid regular expression/],
    ['bad type', { type: 'text' }, /unknown type/],
  ];
  it.each(refused)('%s', async (_name, schema, why) => {
    const error = await adaptSchema(schema, 'input').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaError);
    expect((error as Error).message).toMatch(why);
  });

  it('accepts annotations and x- keys anywhere', async () => {
    const schema = object({ a: { type: 'string', title: 'A', format: 'email', deprecated: true, 'x-ui': { widget: 'text' }, $comment: 'c' } });
    expect(await issuesOf(schema, { a: 'not an email' })).toEqual([]);
  });
});
