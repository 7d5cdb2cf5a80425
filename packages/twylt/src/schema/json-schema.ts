/** Plain JSON Schema objects (schema-first authors, generated schemas). */
import type { JsonSchema, SchemaAdapter, SchemaIo, ValidationResult } from './adapter.js';
import { closeJsonSchema, JsonValidator } from './json-validator.js';

export function adaptJsonSchema(schema: JsonSchema, _io: SchemaIo): SchemaAdapter<Record<string, unknown>> {
  const validator = new JsonValidator(schema);
  let published: JsonSchema | undefined;
  return {
    jsonSchema: () => (published ??= closeJsonSchema(schema) as JsonSchema),
    validate: (value) => validator.validate(value, true) as ValidationResult<Record<string, unknown>>,
  };
}
