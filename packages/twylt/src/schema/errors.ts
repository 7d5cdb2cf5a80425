/** A schema the runtime cannot enforce exactly as it would publish it: refused when adapted. */
export class SchemaError extends Error {
  override name = 'SchemaError';
}
