/** Standard Schema + Standard JSON Schema (ArkType, Valibot): the closed contract first, then the library. */
import { type } from 'arktype';
import * as v from 'valibot';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { describe, expect, it } from 'vitest';
import { adaptSchema, publishSchema, SchemaError } from '../../packages/twylt/src/schema/index.js';
import { accepted, codesOf, issuesOf } from './support/helpers.js';
import { probeArkType, probeValibot } from './support/probes.js';

describe('ArkType', () => {
  it('publishes its JSON Schema closed at every depth', async () => {
    const published = publishSchema(await adaptSchema(probeArkType, 'input'), { name: 'P' });
    expect(published.additionalProperties).toBe(false);
    const properties = published.properties as Record<string, Record<string, any>>;
    expect(properties.point.additionalProperties).toBe(false);
    expect(properties.tags.items.additionalProperties).toBe(false);
    expect(published.$id).toBe('P');
  });

  it('reports the closed contract as TWYLT issues (in the published property order)', async () => {
    const value = { name: '', count: 3.5, kind: 'p', point: { x: 'a', z: 1 }, zz: 1 };
    expect(await issuesOf(probeArkType, value)).toEqual([
      { path: 'count', code: 'int_from_float', message: 'Expected an integer, got a number with a fractional part', value: 3.5 },
      { path: 'kind', code: 'literal_error', message: 'Expected "probe"', value: 'p' },
      { path: 'name', code: 'string_too_short', message: 'Must have at least 1 character', value: '' },
      { path: 'point.x', code: 'invalid_number', message: 'Expected a number', value: 'a' },
      { path: 'point.y', code: 'required', message: 'Required field is missing', value: { x: 'a', z: 1 } },
      { path: 'point.z', code: 'unknown_field', message: 'Unknown field', value: 1 },
      { path: 'zz', code: 'unknown_field', message: 'Unknown field', value: 1 },
    ]);
  });

  it("returns the library's value, with the library's defaults", async () => {
    expect(await accepted(probeArkType, { name: 'a', count: 1, kind: 'probe', point: { x: 0, y: 0 }, tags: [{ label: 'x' }] })).toEqual({
      name: 'a',
      count: 1,
      kind: 'probe',
      point: { x: 0, y: 0 },
      tags: [{ label: 'x', weight: 1 }],
      mode: 'safe',
      verbose: false,
    });
  });

  it('reports what only the library checks as value_error, with its message, path and value', async () => {
    const Even = type({ n: type('number.integer').narrow((n, ctx) => n % 2 === 0 || ctx.mustBe('even')) });
    expect(await issuesOf(Even, { n: 3 })).toEqual([{ path: 'n', code: 'value_error', message: 'n must be even (was 3)', value: 3 }]);
  });

  it('counts string lengths in UTF-16 units, stricter than its published schema (documented gap)', async () => {
    const schema = type({ s: 'string <= 2' });
    expect(await codesOf(schema, { s: '😀😀' })).toEqual([['s', 'value_error']]);
  });
});

describe('Valibot through toStandardJsonSchema', () => {
  it('publishes closed, keeps defaults, and checks the contract first', async () => {
    const published = publishSchema(await adaptSchema(probeValibot, 'input'), {});
    expect(published.additionalProperties).toBe(false);
    expect((published.properties as Record<string, Record<string, unknown>>).mode.default).toBe('safe');
    expect(await codesOf(probeValibot, { name: 'n', count: 0, kind: 'probe', point: { x: 1, y: 1, w: 0 } })).toEqual([
      ['count', 'greater_than_equal'],
      ['point.w', 'unknown_field'],
    ]);
  });

  it('applies the library defaults', async () => {
    expect(await accepted(probeValibot, { name: 'n', count: 1, kind: 'probe', point: { x: 1, y: 1 } })).toEqual({
      name: 'n',
      count: 1,
      mode: 'safe',
      kind: 'probe',
      verbose: false,
      point: { x: 1, y: 1 },
      tags: [],
    });
  });

  it('treats format as an annotation: the library enforces it, as value_error', async () => {
    const schema = toStandardJsonSchema(v.object({ email: v.pipe(v.string(), v.email()) }));
    expect((publishSchema(await adaptSchema(schema, 'input'), {}).properties as any).email).toEqual({ type: 'string', format: 'email' });
    expect(await codesOf(schema, { email: 'nope' })).toEqual([['email', 'value_error']]);
  });

  it('refuses a plain Valibot schema: without the JSON Schema interface nothing can be published', async () => {
    await expect(adaptSchema(v.object({ a: v.string() }), 'input')).rejects.toThrow(SchemaError);
    await expect(adaptSchema(v.object({ a: v.string() }), 'input')).rejects.toThrow(/toStandardJsonSchema|~standard\.jsonSchema/);
  });

  it('refuses what the library cannot convert', async () => {
    const schema = toStandardJsonSchema(v.object({ when: v.date() }));
    await expect(adaptSchema(schema, 'input')).rejects.toThrow(/cannot be expressed as JSON Schema/);
  });
});
