/**
 * Maps, free-form values and integers (issue 12): published and reported as the Python
 * reference does (docs/TWYLT.md section 4), the same way from Zod and from plain JSON Schema.
 * A map or free-form object has no declared fields: a non-object there is `dict_type`; a
 * model with fields stays closed and says `model_type`.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { adaptSchema, publishSchema } from '../../packages/twylt/src/schema/index.js';
import { accepted, issuesOf } from './support/helpers.js';

const Inner = z.object({ a: z.int() });

/** One contract, written twice. */
const ZodShapes = z.object({
  headers: z.record(z.string(), z.string()),
  meta: z.record(z.string(), z.any()).nullable().optional(),
  loose: z.looseObject({}).nullable().optional(),
  items: z.array(z.any()).optional(),
  anything: z.unknown().optional(),
  json: z.json().optional(),
  inner: Inner.nullable().optional(),
});

const FREE_FORM = { type: 'object', additionalProperties: true };
const NULLABLE_FREE_FORM = { anyOf: [FREE_FORM, { type: 'null' }] };
const INNER = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'], additionalProperties: false };
const JsonShapes = {
  type: 'object',
  properties: {
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    meta: NULLABLE_FREE_FORM,
    loose: NULLABLE_FREE_FORM,
    items: { type: 'array', items: {} },
    anything: {},
    json: {},
    inner: { anyOf: [{ $ref: '#/$defs/Inner' }, { type: 'null' }] },
  },
  required: ['headers'],
  $defs: { Inner: { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] } },
};

const KINDS = [
  ['zod', ZodShapes],
  ['json-schema', JsonShapes],
] as const;

describe.each(KINDS)('maps and free-form values (%s)', (_kind, schema) => {
  it('publishes a map as additionalProperties: {schema}, free-form objects as additionalProperties: true, list[Any] and Any as the reference does', async () => {
    const published = publishSchema(await adaptSchema(schema, 'input'));
    const properties = published.properties as Record<string, unknown>;
    expect(properties.headers).toEqual({ type: 'object', additionalProperties: { type: 'string' } });
    expect(properties.meta).toEqual(NULLABLE_FREE_FORM);
    expect(properties.loose).toEqual(NULLABLE_FREE_FORM);
    expect(properties.items).toEqual({ type: 'array', items: {} });
    expect(properties.anything).toEqual({});
    expect(properties.json).toEqual({});
    const inner = properties.inner as { anyOf: unknown[] };
    const model = (inner.anyOf[0] as { $ref?: string }).$ref ? (published.$defs as Record<string, unknown>).Inner : inner.anyOf[0];
    expect(model).toEqual(INNER);
    expect(published.required).toEqual(['headers']);
  });

  it('reports a non-object where a map or free-form object is expected as dict_type, also inside an optional; a model as model_type', async () => {
    expect(await issuesOf(schema, { headers: 5, meta: 'x', loose: [], items: {}, inner: 7 })).toEqual([
      { path: 'headers', code: 'dict_type', message: 'Input should be a valid dictionary', value: 5 },
      { path: 'meta', code: 'dict_type', message: 'Input should be a valid dictionary', value: 'x' },
      { path: 'loose', code: 'dict_type', message: 'Input should be a valid dictionary', value: [] },
      { path: 'items', code: 'list_type', message: 'Expected an array', value: {} },
      { path: 'inner', code: 'model_type', message: 'Expected an object', value: 7 },
    ]);
    expect(await issuesOf(schema, null)).toEqual([{ path: '<root>', code: 'model_type', message: 'Expected an object', value: null }]);
  });

  it('reports a bad map entry at its key with the entry\'s own code, and unknown keys of a model inside an optional at their path', async () => {
    expect(await issuesOf(schema, { headers: { ok: 'x', a: 1 }, inner: { a: 1, b: 2 } })).toEqual([
      { path: 'headers.a', code: 'invalid_string', message: 'Expected a string', value: 1 },
      { path: 'inner.b', code: 'unknown_field', message: 'Unknown field', value: 2 },
    ]);
  });

  it('accepts any JSON in free-form values, and null in optional ones', async () => {
    const value = {
      headers: { 'X-Any': 'y' },
      meta: { a: [1, 'x', null, { b: true }], c: {} },
      loose: { deep: { er: [[]] } },
      items: [1, 'x', null, { a: [true] }, [2]],
      anything: [{ z: null }],
      json: { k: [1.5, false] },
      inner: null,
    };
    expect(await accepted(schema, value)).toEqual(value);
    expect(await accepted(schema, { headers: {}, meta: null, loose: null })).toMatchObject({ meta: null, loose: null });
  });
});

describe('integers: no bounds the author did not write', () => {
  const CASES: Array<[string, unknown, Record<string, unknown>]> = [
    ['z.int()', z.int(), { type: 'integer' }],
    ['z.int().min(1)', z.int().min(1), { type: 'integer', minimum: 1 }],
    ['z.number().int()', z.number().int(), { type: 'integer' }],
    ['z.number().int().max(9)', z.number().int().max(9), { type: 'integer', maximum: 9 }],
    ['z.int().default(3)', z.int().default(3), { type: 'integer', default: 3 }],
    ['z.array(z.int())', z.array(z.int()), { type: 'array', items: { type: 'integer' } }],
    ['JSON Schema integer', { type: 'integer' }, { type: 'integer' }],
    ['JSON Schema integer, minimum 1', { type: 'integer', minimum: 1 }, { type: 'integer', minimum: 1 }],
  ];

  for (const [name, field, expected] of CASES) {
    it(`${name} publishes ${JSON.stringify(expected)} on input and output`, async () => {
      const contract = typeof (field as { _zod?: unknown })._zod === 'object' ? z.object({ n: field as z.ZodType }) : { type: 'object', properties: { n: field }, required: ['n'] };
      for (const io of ['input', 'output'] as const) {
        const published = publishSchema(await adaptSchema(contract, io));
        expect((published.properties as Record<string, unknown>).n).toEqual(expected);
        expect(JSON.stringify(published)).not.toContain('9007199254740991');
      }
    });
  }

  it('declared bounds of other formats stay (z.int32() says its range)', async () => {
    const published = publishSchema(await adaptSchema(z.object({ n: z.int32() }), 'input'));
    expect((published.properties as Record<string, unknown>).n).toEqual({ type: 'integer', minimum: -2147483648, maximum: 2147483647 });
  });

  it('the runtime accepts what the published schema says: integers beyond 2^53 are integers, fractions and strings are not', async () => {
    for (const contract of [z.object({ n: z.int(), m: z.number().int().min(1) }), { type: 'object', properties: { n: { type: 'integer' }, m: { type: 'integer', minimum: 1 } }, required: ['n', 'm'] }]) {
      const adapter = await adaptSchema(contract, 'input');
      const ajv = new Ajv2020({ strict: false }).compile(publishSchema(adapter));
      for (const value of [{ n: 2 ** 60, m: 2 ** 53 + 2 }, { n: -(2 ** 60), m: 1 }, { n: 1e300, m: 2 }]) {
        expect(ajv(value)).toBe(true);
        expect(await accepted(contract, value)).toEqual(value);
      }
      expect(await issuesOf(contract, { n: 0.5, m: 0 })).toEqual([
        { path: 'n', code: 'int_from_float', message: 'Expected an integer, got a number with a fractional part', value: 0.5 },
        { path: 'm', code: 'greater_than_equal', message: 'Must be greater than or equal to 1', value: 0 },
      ]);
      expect(await issuesOf(contract, { n: '5', m: null })).toEqual([
        { path: 'n', code: 'invalid_integer', message: 'Expected an integer', value: '5' },
        { path: 'm', code: 'invalid_integer', message: 'Expected an integer', value: null },
      ]);
    }
  });
});
