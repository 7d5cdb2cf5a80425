/**
 * Any Standard Schema with the Standard JSON Schema interface (ArkType 2.2+, Valibot through
 * `toStandardJsonSchema` of @valibot/to-json-schema, ...). The library's own JSON Schema is
 * closed and published; validation first enforces that closed contract with the JSON Schema
 * validator (structure, unknown fields, constraints, as TWYLT issues), then lets the library
 * validate for its value and defaults. What only the library checks (a refinement, a
 * format) becomes a `value_error` with the library's message.
 *
 * The value being validated is always the schema's input side (for an output schema: what
 * biz returns, before the library fills defaults), so the contract checked is the closed
 * `input` JSON Schema; the one published is that of the requested side.
 */
import type { PathSegment } from '../protocol/issues.js';
import type { JsonSchema, SchemaAdapter, SchemaIo, ValidationResult } from './adapter.js';
import { SchemaError } from './errors.js';
import { issues } from './issues.js';
import { assertSupportedJsonSchema, closeJsonSchema } from './json-schema-subset.js';
import { JsonValidator } from './json-validator.js';
import type { StandardIssue, StandardResult, StandardSchemaV1 } from './types.js';

const TARGET = 'draft-2020-12';

export function adaptStandardSchema(schema: StandardSchemaV1, io: SchemaIo): SchemaAdapter {
  const std = schema['~standard'];
  const converter = std.jsonSchema;
  if (typeof converter?.input !== 'function' || typeof converter.output !== 'function') {
    const hint = std.vendor === 'valibot' ? '; wrap it with toStandardJsonSchema() from @valibot/to-json-schema' : '';
    throw new SchemaError(`This ${std.vendor} schema has no Standard JSON Schema interface ("~standard.jsonSchema"), so its contract cannot be published${hint}`);
  }
  const convert = (side: SchemaIo): JsonSchema => {
    try {
      return closeJsonSchema(converter[side]({ target: TARGET })) as JsonSchema;
    } catch (error) {
      throw new SchemaError(`This ${std.vendor} schema cannot be expressed as JSON Schema: ${(error as Error).message}`);
    }
  };
  const accepted = convert('input');
  const published = io === 'input' ? accepted : convert(io);
  assertSupportedJsonSchema(accepted);
  if (published !== accepted) assertSupportedJsonSchema(published);
  const contract = new JsonValidator(accepted);

  const fromLibrary = (value: unknown, result: StandardResult<unknown>): ValidationResult =>
    result.issues ? { ok: false, issues: result.issues.map((i) => libraryIssue(i, value)) } : { ok: true, value: result.value };

  return {
    jsonSchema: () => published,
    validate(value) {
      const checked = contract.validate(value, false);
      if (!checked.ok) return checked;
      const result = std.validate(value);
      return result instanceof Promise ? result.then((r) => fromLibrary(value, r)) : fromLibrary(value, result);
    },
  };
}

function libraryIssue(raw: StandardIssue, root: unknown) {
  const path: PathSegment[] = (raw.path ?? []).map((p) => {
    const key = typeof p === 'object' && p !== null ? p.key : p;
    return typeof key === 'number' ? key : String(key);
  });
  let value: unknown = root;
  for (const key of path) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key as string] : undefined;
  return issues.custom(path, raw.message, value);
}
