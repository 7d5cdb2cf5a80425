/** Small helpers for the schema tests. */
import type { Issue } from '../../../packages/twylt/src/protocol/issues.js';
import { adaptSchema } from '../../../packages/twylt/src/schema/index.js';
import type { SchemaIo } from '../../../packages/twylt/src/schema/adapter.js';

/** The issues a schema reports for a value (an empty list when it is accepted). */
export async function issuesOf(schema: unknown, value: unknown, io: SchemaIo = 'input'): Promise<Issue[]> {
  const result = await (await adaptSchema(schema, io)).validate(value);
  return result.ok ? [] : result.issues;
}

/** `[path, code]` pairs, for order assertions. */
export async function codesOf(schema: unknown, value: unknown, io: SchemaIo = 'input'): Promise<Array<[string, string]>> {
  return (await issuesOf(schema, value, io)).map((i) => [i.path, i.code]);
}

/** The accepted value, or a failure with the issues. */
export async function accepted(schema: unknown, value: unknown, io: SchemaIo = 'input'): Promise<unknown> {
  const result = await (await adaptSchema(schema, io)).validate(value);
  if (!result.ok) throw new Error(`rejected: ${JSON.stringify(result.issues)}`);
  return result.value;
}
