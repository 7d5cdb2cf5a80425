/**
 * One interface for every kind of schema a tool may declare (Zod 4, Standard Schema with
 * its JSON Schema interface, plain JSON Schema). The run loop only ever sees this.
 */
import type { Issue } from '../protocol/issues.js';

import type { JsonSchema } from '../protocol/spec.js';

export type { JsonSchema };

/** Which side of a contract: input fields with defaults are optional, output ones are not. */
export type SchemaIo = 'input' | 'output';

export type ValidationResult<T = unknown> = { ok: true; value: T } | { ok: false; issues: Issue[] };

export interface SchemaAdapter<T = unknown> {
  /**
   * The published contract: JSON Schema, closed (`additionalProperties: false` on every
   * object), with the author's metadata. Accepts exactly what `validate` accepts.
   */
  jsonSchema(): JsonSchema;
  /** Validate a parsed JSON value; on success the value with defaults applied. */
  validate(value: unknown): ValidationResult<T> | Promise<ValidationResult<T>>;
}
