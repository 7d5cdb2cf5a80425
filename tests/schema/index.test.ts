/** The schema layer's entry: kind detection, lazy loading, publication identity, inference types. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type } from 'arktype';
import * as v from 'valibot';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { z } from 'zod';
import * as zm from 'zod/mini';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { adaptSchema, publishSchema, schemaKind, SchemaError } from '../../packages/twylt/src/schema/index.js';
import type { InferInput, InferOutput } from '../../packages/twylt/src/schema/types.js';
import type { SchemaAdapter } from '../../packages/twylt/src/schema/adapter.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

describe('schemaKind', () => {
  it('recognises Zod (classic and mini), Standard Schemas (ArkType functions included) and JSON Schema', () => {
    expect(schemaKind(z.string())).toBe('zod');
    expect(schemaKind(zm.string())).toBe('zod');
    expect(schemaKind(type({ a: 'string' }))).toBe('standard');
    expect(schemaKind(toStandardJsonSchema(v.string()))).toBe('standard');
    expect(schemaKind({ type: 'object' })).toBe('json-schema');
    expect(schemaKind(Object.create(null))).toBe('json-schema');
  });

  it('refuses anything else with a clear SchemaError', () => {
    for (const bad of [null, undefined, 42, 'string', [], new Map(), () => 1]) expect(() => schemaKind(bad)).toThrow(SchemaError);
    const zod3Like = { _def: { typeName: 'ZodString' }, '~standard': { version: 1, vendor: 'zod', validate: () => ({ value: 1 }) } };
    expect(() => schemaKind(zod3Like)).toThrow(/Zod 3/);
  });
});

describe('publishSchema', () => {
  const fixed: SchemaAdapter = { jsonSchema: () => ({ $id: 'inner', type: 'object', 'x-schema-version': '0', additionalProperties: false }), validate: (value) => ({ ok: true, value }) };

  it('appends $id then x-schema-version as the last keys, replacing earlier ones, without touching the adapter', () => {
    const published = publishSchema(fixed, { name: 'Name', version: '1.2.3' });
    expect(Object.entries(published)).toEqual([
      ['type', 'object'],
      ['additionalProperties', false],
      ['$id', 'Name'],
      ['x-schema-version', '1.2.3'],
    ]);
    expect(fixed.jsonSchema().$id).toBe('inner');
  });

  it('adds nothing that was not declared', () => {
    expect(publishSchema(fixed, {})).toEqual(fixed.jsonSchema());
    expect(Object.keys(publishSchema(fixed, { version: '2' })).at(-1)).toBe('x-schema-version');
  });
});

describe('lazy loading', () => {
  const probe = async (kind: string) => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'tests/schema/support/load-probe.ts', kind], { cwd: root });
    return JSON.parse(stdout) as { ok: boolean; zodBefore: boolean; zodAfter: boolean };
  };

  it('a JSON-Schema-only tool never loads Zod', async () => {
    expect(await probe('json')).toEqual({ ok: true, zodBefore: false, zodAfter: false });
  });

  it('a Zod tool uses the Zod its author already loaded (control for the test above)', async () => {
    expect(await probe('zod')).toEqual({ ok: true, zodBefore: true, zodAfter: true });
  });
});

describe('InferInput / InferOutput', () => {
  it('take the input and output types of Zod and Standard Schemas, Record<string, unknown> for JSON Schema', async () => {
    const Zod = z.object({ a: z.string(), n: z.int().default(1) });
    expectTypeOf<InferInput<typeof Zod>>().toEqualTypeOf<{ a: string; n?: number | undefined }>();
    expectTypeOf<InferOutput<typeof Zod>>().toEqualTypeOf<{ a: string; n: number }>();
    const Ark = type({ a: 'string', n: 'number = 1' });
    expectTypeOf<InferOutput<typeof Ark>>().toEqualTypeOf<{ a: string; n: number }>();
    const Vali = toStandardJsonSchema(v.object({ a: v.optional(v.string(), 'x') }));
    expectTypeOf<InferInput<typeof Vali>>().toEqualTypeOf<{ a?: string | undefined }>();
    expectTypeOf<InferOutput<typeof Vali>>().toEqualTypeOf<{ a: string }>();
    const Json = { type: 'object', properties: {} };
    expectTypeOf<InferInput<typeof Json>>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<InferOutput<typeof Json>>().toEqualTypeOf<Record<string, unknown>>();
    // The runtime agrees with the types on the defaults.
    expect(await (await adaptSchema(Zod, 'input')).validate({ a: 'x' })).toEqual({ ok: true, value: { a: 'x', n: 1 } });
  });
});
