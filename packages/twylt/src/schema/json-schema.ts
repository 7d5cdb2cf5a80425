/** Plain JSON Schema objects (schema-first authors, generated schemas). */
import type { JsonSchema, SchemaAdapter, SchemaIo, ValidationResult } from './adapter.js';
import { assertSupportedJsonSchema, closeJsonSchema } from './json-schema-subset.js';
import type { JsonValidator } from './json-validator.js';

/**
 * Refuses a schema outside the subset now (describe included); the validator module loads
 * at the first `validate`, so describing the tool never loads it.
 */
export function adaptJsonSchema(schema: JsonSchema, _io: SchemaIo): SchemaAdapter<Record<string, unknown>> {
  assertSupportedJsonSchema(schema);
  let published: JsonSchema | undefined;
  let validator: JsonValidator | undefined;
  return {
    jsonSchema: () => (published ??= closeJsonSchema(schema) as JsonSchema),
    validate: async (value) => {
      validator ??= new (await import('./json-validator.js')).JsonValidator(schema);
      return validator.validate(value, true) as ValidationResult<Record<string, unknown>>;
    },
  };
}
