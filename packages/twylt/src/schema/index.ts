/**
 * The schema layer's entry: recognise the kind of a declared schema, load the one
 * implementation it needs (a JSON-Schema-only tool never loads Zod), and publish. The plain
 * JSON Schema adapter is part of this module's graph; its validator is not.
 */
import type { JsonSchema, SchemaAdapter, SchemaIo } from './adapter.js';
import { SchemaError } from './errors.js';
import { adaptJsonSchema } from './json-schema.js';
import type { StandardSchemaV1 } from './types.js';

export type { JsonSchema, SchemaAdapter, SchemaIo, ValidationResult } from './adapter.js';
export type { InferInput, InferOutput, SchemaLike } from './types.js';
export { SchemaError } from './errors.js';

export type SchemaKind = 'zod' | 'standard' | 'json-schema';

/** Which implementation a schema needs; throws a SchemaError for anything else. */
export function schemaKind(schema: unknown): SchemaKind {
  // ArkType's types are functions that carry "~standard".
  if (typeof schema === 'function' && '~standard' in schema) return 'standard';
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new SchemaError(`A schema must be a Zod 4 schema, a Standard Schema or a JSON Schema object, not ${schema === null ? 'null' : Array.isArray(schema) ? 'an array' : typeof schema}`);
  }
  const zod = (schema as { _zod?: { def?: unknown; version?: { major?: number } } })._zod;
  if (zod && typeof zod === 'object' && zod.def) {
    if (zod.version?.major !== undefined && zod.version.major !== 4) throw new SchemaError(`Zod ${zod.version.major} schemas are not supported; use Zod 4`);
    return 'zod';
  }
  if ('~standard' in schema) {
    if ('_def' in schema) throw new SchemaError('Zod 3 schemas are not supported; use Zod 4 (import { z } from "zod" with zod@4)');
    return 'standard';
  }
  const proto = Object.getPrototypeOf(schema);
  if (proto !== Object.prototype && proto !== null) throw new SchemaError('A JSON Schema must be a plain object');
  return 'json-schema';
}

/** The adapter for a declared schema, for one side of the contract. */
export async function adaptSchema(schema: unknown, io: SchemaIo): Promise<SchemaAdapter> {
  switch (schemaKind(schema)) {
    case 'zod': {
      const { adaptZod } = await import('./zod.js');
      return adaptZod(schema as Parameters<typeof adaptZod>[0], io);
    }
    case 'standard': {
      const { adaptStandardSchema } = await import('./standard.js');
      return adaptStandardSchema(schema as StandardSchemaV1, io);
    }
    case 'json-schema':
      // Small and without the validator (loaded at the first validate): no import() round trip.
      return adaptJsonSchema(schema as JsonSchema, io);
  }
}

/** Schema identity for publication: the schema's name and version, when declared. */
export interface SchemaIdentity {
  name?: string;
  version?: string;
}

/** The published schema: `$id` (name) and `x-schema-version` appended as the last keys, only when declared. */
export function publishSchema(adapter: SchemaAdapter, identity: SchemaIdentity = {}): JsonSchema {
  const out: JsonSchema = { ...adapter.jsonSchema() };
  if (identity.name !== undefined) {
    delete out.$id;
    out.$id = identity.name;
  }
  if (identity.version !== undefined) {
    delete out['x-schema-version'];
    out['x-schema-version'] = identity.version;
  }
  return out;
}
