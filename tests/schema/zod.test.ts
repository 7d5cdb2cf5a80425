/** The Zod 4 adapter: closed copies, issue mapping (docs/TWYLT.md section 4), publication, refusals. */
import { z } from 'zod';
import * as zm from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { ProbeInput, ProbeOutput } from '../../examples/probe/schemas.js';
import { adaptSchema, publishSchema, SchemaError } from '../../packages/twylt/src/schema/index.js';
import { BOUND_ISSUES, LITERAL_ISSUES } from './support/constraint-issues.js';
import { accepted, codesOf, issuesOf } from './support/helpers.js';

const Point = z.object({ x: z.number(), y: z.number() });

describe('Zod issue codes, messages, paths and values', () => {
  it('reports a missing field as required, with the whole parent object as value', async () => {
    const schema = z.object({ a: z.string(), point: Point });
    expect(await issuesOf(schema, { point: { x: 1 } })).toEqual([
      { path: 'a', code: 'required', message: 'Required field is missing', value: { point: { x: 1 } } },
      { path: 'point.y', code: 'required', message: 'Required field is missing', value: { x: 1 } },
    ]);
  });

  it('reports a missing literal or enum field as required too', async () => {
    expect(await codesOf(z.object({ k: z.literal('a'), e: z.enum(['x', 'y']) }), {})).toEqual([
      ['k', 'required'],
      ['e', 'required'],
    ]);
  });

  it('reports each unknown key with its value, after the declared fields, in input order, at any depth', async () => {
    const schema = z.object({ a: z.string(), b: z.object({ c: z.int() }), list: z.array(z.object({ d: z.boolean() })) });
    expect(await issuesOf(schema, { zz: 1, a: 5, yy: [2], b: { c: 1.5, q: 'x' }, list: [{ d: true, e: null }] })).toEqual([
      { path: 'a', code: 'invalid_string', message: 'Expected a string', value: 5 },
      { path: 'b.c', code: 'int_from_float', message: 'Expected an integer, got a number with a fractional part', value: 1.5 },
      { path: 'b.q', code: 'unknown_field', message: 'Unknown field', value: 'x' },
      { path: 'list[0].e', code: 'unknown_field', message: 'Unknown field', value: null },
      { path: 'zz', code: 'unknown_field', message: 'Unknown field', value: 1 },
      { path: 'yy', code: 'unknown_field', message: 'Unknown field', value: [2] },
    ]);
  });

  it('maps wrong types, null included, to the fixed codes and messages', async () => {
    const schema = z.object({ i: z.int(), j: z.number().int(), n: z.number(), b: z.boolean(), s: z.string(), o: Point, l: z.array(z.string()), nul: z.null() });
    expect(await issuesOf(schema, { i: null, j: '1', n: null, b: 'yes', s: null, o: [], l: {}, nul: 0 })).toEqual([
      { path: 'i', code: 'invalid_integer', message: 'Expected an integer', value: null },
      { path: 'j', code: 'invalid_integer', message: 'Expected an integer', value: '1' },
      { path: 'n', code: 'invalid_number', message: 'Expected a number', value: null },
      { path: 'b', code: 'invalid_boolean', message: 'Expected a boolean', value: 'yes' },
      { path: 's', code: 'invalid_string', message: 'Expected a string', value: null },
      { path: 'o', code: 'model_type', message: 'Expected an object', value: [] },
      { path: 'l', code: 'list_type', message: 'Expected an array', value: {} },
      { path: 'nul', code: 'none_required', message: 'Expected null', value: 0 },
    ]);
  });

  it('reports a non-object payload at <root> as model_type', async () => {
    expect(await issuesOf(z.object({ a: z.string() }), 'text')).toEqual([
      { path: '<root>', code: 'model_type', message: 'Expected an object', value: 'text' },
    ]);
  });

  it('maps bounds, lengths, patterns, multiples, literals and enums', async () => {
    const schema = z.object({
      gte: z.number().min(1),
      gt: z.number().gt(1),
      lte: z.number().max(1),
      lt: z.number().lt(1),
      mul: z.int().multipleOf(5),
      short: z.string().min(2),
      long: z.string().max(2),
      pat: z.string().regex(/^a+$/),
      few: z.array(z.int()).min(1),
      many: z.array(z.int()).max(1),
      lit: z.literal('on'),
      en: z.enum(['red', 'green']),
    });
    const value = { gte: 0, gt: 1, lte: 2, lt: 1, mul: 7, short: 'a', long: 'abc', pat: 'b', few: [], many: [1, 2], lit: 'off', en: 'blue' };
    expect(await issuesOf(schema, value)).toEqual([...BOUND_ISSUES, ...LITERAL_ISSUES]);
  });

  it('words string format failures by the format, with the pattern code', async () => {
    const schema = z.object({ e: z.email(), s: z.string().startsWith('ab'), t: z.templateLiteral(['v', z.int()]) });
    expect(await issuesOf(schema, { e: 'nope', s: 'x', t: 'v1.5' })).toEqual([
      { path: 'e', code: 'string_pattern_mismatch', message: 'Must be a valid email', value: 'nope' },
      { path: 's', code: 'string_pattern_mismatch', message: 'Must start with "ab"', value: 'x' },
      { path: 't', code: 'string_pattern_mismatch', message: 'Must match the pattern /^v-?\\d+$/', value: 'v1.5' },
    ]);
  });

  it('counts string lengths in code points, as JSON Schema does', async () => {
    const schema = z.object({ s: z.string().max(2) });
    expect(await issuesOf(schema, { s: '😀😀' })).toEqual([]);
    expect(await codesOf(schema, { s: '😀😀😀' })).toEqual([['s', 'string_too_long']]);
  });

  it('reports one issue per value: the first broken constraint in a fixed order', async () => {
    const schema = z.object({ s: z.string().regex(/^[a-z]+$/).min(3), n: z.number().multipleOf(2).max(3) });
    expect(await codesOf(schema, { s: 'A', n: 5 })).toEqual([
      ['s', 'string_too_short'],
      ['n', 'less_than_equal'],
    ]);
  });

  it('reports an int where a whole number is expected, and non-finite numbers on output', async () => {
    expect(await codesOf(z.object({ n: z.int() }), { n: 3.5 })).toEqual([['n', 'int_from_float']]);
    expect(await codesOf(z.object({ n: z.number() }), { n: Infinity }, 'output')).toEqual([['n', 'finite_number']]);
  });

  it('reports unions: literals as literal_error, nullable as the inner type, tags, and no match', async () => {
    const Shape = z.discriminatedUnion('kind', [z.object({ kind: z.literal('a'), x: z.int() }), z.object({ kind: z.literal('b') })]);
    const schema = z.object({
      level: z.union([z.literal('low'), z.literal('high')]),
      maybe: z.int().nullable(),
      shape: Shape,
      missingTag: Shape,
      inner: Shape,
      either: z.union([z.string(), z.boolean()]),
      fits: z.union([z.string(), Point]),
    });
    const value = { level: 'mid', maybe: 'x', shape: { kind: 'c' }, missingTag: { x: 1 }, inner: { kind: 'a', x: 'no' }, either: 1, fits: { x: 1 } };
    expect(await issuesOf(schema, value)).toEqual([
      { path: 'level', code: 'literal_error', message: 'Expected "low" or "high"', value: 'mid' },
      { path: 'maybe', code: 'invalid_integer', message: 'Expected an integer', value: 'x' },
      { path: 'shape', code: 'union_tag_invalid', message: 'Unknown value of the tag field "kind"; expected "a" or "b"', value: { kind: 'c' } },
      { path: 'missingTag', code: 'union_tag_not_found', message: 'The tag field "kind" is missing', value: { x: 1 } },
      { path: 'inner.x', code: 'invalid_integer', message: 'Expected an integer', value: 'no' },
      { path: 'either', code: 'union_no_match', message: 'Does not match any of the allowed alternatives', value: 1 },
      { path: 'fits.y', code: 'required', message: 'Required field is missing', value: { x: 1 } },
    ]);
  });

  it('reports every issue of the probe in declaration order, nested issues inline', async () => {
    const value = {
      zz: 0,
      point: { x: 'a', extra: 1 },
      name: '',
      count: 3.5,
      kind: 'p',
      tags: [{ label: 'A!' }, { weight: 11, q: 2 }],
      mode: 'x',
    };
    expect(await codesOf(ProbeInput, value)).toEqual([
      ['name', 'string_too_short'],
      ['count', 'int_from_float'],
      ['mode', 'enum'],
      ['kind', 'literal_error'],
      ['point.x', 'invalid_number'],
      ['point.y', 'required'],
      ['point.extra', 'unknown_field'],
      ['tags[0].label', 'string_pattern_mismatch'],
      ['tags[1].label', 'required'],
      ['tags[1].weight', 'less_than_equal'],
      ['tags[1].q', 'unknown_field'],
      ['zz', 'unknown_field'],
    ]);
  });

  it('validates records, tuples and recursive schemas', async () => {
    type Node = { name: string; children?: Node[] };
    const Tree: z.ZodType<Node> = z.object({ name: z.string(), children: z.lazy(() => z.array(Tree)).optional() });
    const schema = z.object({ scores: z.record(z.string().max(3), z.int()), pair: z.tuple([z.string(), z.int()]), tree: Tree });
    expect(await codesOf(schema, { scores: { abcd: 1, a: 'x' }, pair: ['a', 'b'], tree: { name: 'r', children: [{ name: 1, z: 0 }] } })).toEqual([
      ['scores.abcd', 'invalid_key'],
      ['scores.a', 'invalid_integer'],
      ['pair[1]', 'invalid_integer'],
      ['tree.children[0].name', 'invalid_string'],
      ['tree.children[0].z', 'unknown_field'],
    ]);
  });

  it('works with zod/mini schemas', async () => {
    const schema = zm.object({ a: zm.string(), b: zm.optional(zm.int()) });
    expect(await codesOf(schema, { a: 1, c: 2 })).toEqual([
      ['a', 'invalid_string'],
      ['c', 'unknown_field'],
    ]);
  });
});

describe('Zod values', () => {
  it('applies defaults and returns fields in declaration order', async () => {
    const value = await accepted(ProbeInput, { point: { y: 2, x: 1 }, kind: 'probe', count: 2, name: 'Ada' });
    expect(JSON.stringify(value)).toBe('{"name":"Ada","count":2,"mode":"safe","kind":"probe","verbose":false,"point":{"x":1,"y":2},"tags":[]}');
  });

  it('fills defaults on the output side too, where the published schema requires them', async () => {
    const value = await accepted(ProbeOutput, { name: 'Ada', count: 2, kind: 'probe', point: { x: 1, y: 2 } }, 'output');
    expect(value).toMatchObject({ mode: 'safe', verbose: false, tags: [] });
    const published = publishSchema(await adaptSchema(ProbeOutput, 'output'), {});
    expect(published.required).toEqual(['name', 'count', 'mode', 'kind', 'verbose', 'point', 'tags']);
  });
});

describe("the author's schema", () => {
  it('is not mutated: it stays open, with the same definition objects and metadata', async () => {
    const inner = z.object({ b: z.string().describe('B') });
    const schema = z.object({ a: inner }).describe('Root');
    const before = JSON.stringify(z.toJSONSchema(schema));
    const shape = schema.shape;
    const def = schema._zod.def;

    const adapter = await adaptSchema(schema, 'input');
    adapter.jsonSchema();
    expect((await adapter.validate({ a: { b: 'x', extra: 1 } })).ok).toBe(false);

    expect(schema._zod.def).toBe(def);
    expect(schema.shape).toBe(shape);
    expect(schema.shape.a).toBe(inner);
    expect(schema.safeParse({ a: { b: 'x', extra: 1 } }).success).toBe(true);
    expect(JSON.stringify(z.toJSONSchema(schema))).toBe(before);
    expect(schema.description).toBe('Root');
    expect(z.globalRegistry.get(inner.shape.b)).toEqual({ description: 'B' });
  });

  it('closes loose objects with declared fields too, and keeps a typed catchall as the value schema of extra keys', async () => {
    expect(await codesOf(z.looseObject({ a: z.string() }), { a: 'x', b: 1 })).toEqual([['b', 'unknown_field']]);
    const withCatchall = z.object({ a: z.string() }).catchall(z.int());
    expect(await codesOf(withCatchall, { a: 'x', b: 1, c: 'y' })).toEqual([['c', 'invalid_integer']]);
    expect(publishSchema(await adaptSchema(withCatchall, 'input'), {}).additionalProperties).toEqual({ type: 'integer' });
  });
});

describe('Zod publication', () => {
  it('keeps descriptions, defaults, constraints, examples and x- keys, closes every object, and frees defaulted fields on input', async () => {
    const published = publishSchema(await adaptSchema(ProbeInput, 'input'), {});
    const properties = published.properties as Record<string, Record<string, unknown>>;
    expect(published.description).toBe('What the probe is asked to do');
    expect(published['x-twylt-example']).toBe('probe');
    expect(published.examples).toEqual([{ name: 'Ada', count: 2, kind: 'probe', point: { x: 1, y: 2 } }]);
    expect(published.additionalProperties).toBe(false);
    expect(published.required).toEqual(['name', 'count', 'kind', 'point']);
    expect(properties.name).toMatchObject({ type: 'string', minLength: 1, maxLength: 40, description: 'Display name', examples: ['Ada'] });
    expect(properties.mode).toMatchObject({ default: 'safe', enum: ['fast', 'safe'] });
    expect(properties.point).toMatchObject({ description: 'A point on the plane', additionalProperties: false });
    expect(properties.tags).toMatchObject({ default: [], maxItems: 5, items: { additionalProperties: false, required: ['label'] } });
    expect((properties.tags.items as { properties: Record<string, unknown> }).properties.label).toMatchObject({ pattern: '^[a-z][a-z0-9-]*$', description: 'Lower-case tag label' });
    expect(properties.ratio).toMatchObject({ exclusiveMinimum: 0, exclusiveMaximum: 1 });
  });

  it('appends $id and x-schema-version last, only when declared', async () => {
    const adapter = await adaptSchema(ProbeInput, 'input');
    expect(Object.keys(publishSchema(adapter, { name: 'ProbeInput', version: '2.1.0' })).slice(-2)).toEqual(['$id', 'x-schema-version']);
    const bare = publishSchema(adapter, {});
    expect(bare).not.toHaveProperty('$id');
    expect(bare).not.toHaveProperty('x-schema-version');
    expect(Object.keys(publishSchema(adapter, { version: '1' })).at(-1)).toBe('x-schema-version');
  });

  it('gives the same object on every call (publication is computed once, lazily)', async () => {
    const adapter = await adaptSchema(ProbeInput, 'input');
    expect(adapter.jsonSchema()).toBe(adapter.jsonSchema());
  });
});

describe('Zod features JSON Schema cannot carry are refused when adapted', () => {
  const refused: Array<[string, unknown, RegExp]> = [
    ['refine', z.object({ a: z.string().refine((s) => s.length > 1) }), /refinement/],
    ['superRefine', z.object({ a: z.int() }).superRefine(() => {}), /refinement/],
    ['transform', z.object({ a: z.string().transform((s) => s.length) }), /transform/],
    ['preprocess', z.object({ a: z.preprocess((v) => v, z.string()) }), /transform|pipe/],
    ['pipe', z.object({ a: z.string().pipe(z.string().min(1)) }), /pipe/],
    ['coerce', z.object({ a: z.coerce.number() }), /coercion/],
    ['trim', z.object({ a: z.string().trim() }), /rewrite/],
    ['catch', z.object({ a: z.string().catch('x') }), /catch/],
    ['date', z.object({ a: z.date() }), /dates/],
    ['intersection of objects', z.object({ a: z.string() }).and(z.object({ b: z.string() })), /intersection/],
  ];
  it.each(refused)('%s', async (_name, schema, why) => {
    const error = await adaptSchema(schema, 'input').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaError);
    expect((error as Error).message).toMatch(why);
  });

  it('names the field at fault', async () => {
    await expect(adaptSchema(z.object({ outer: z.object({ inner: z.string().refine(() => true) }) }), 'input')).rejects.toThrow(/<root>\.outer\.inner/);
  });
});
