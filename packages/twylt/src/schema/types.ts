/**
 * Type-level view of the schemas a tool may declare. No runtime code: the Standard Schema
 * shapes are declared here (structurally identical to `@standard-schema/spec` v1) so that
 * neither the package nor its users need that dependency.
 */

/** The Standard Schema v1 interface (https://standardschema.dev), types only. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaProps<Input, Output>;
}

export interface StandardSchemaProps<Input = unknown, Output = Input> {
  readonly version: 1;
  readonly vendor: string;
  readonly validate: (value: unknown, options?: { readonly libraryOptions?: Record<string, unknown> }) => StandardResult<Output> | Promise<StandardResult<Output>>;
  readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  /** The Standard JSON Schema converter; required by twylt, since every contract is published. */
  readonly jsonSchema?: StandardJsonSchemaConverter;
}

export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> };

export interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

export interface StandardJsonSchemaConverter {
  readonly input: (options: { readonly target: string; readonly libraryOptions?: Record<string, unknown> }) => Record<string, unknown>;
  readonly output: (options: { readonly target: string; readonly libraryOptions?: Record<string, unknown> }) => Record<string, unknown>;
}

/** A plain JSON Schema object, as a schema-first author writes it. */
export type JsonSchemaObject = Record<string, unknown>;

/**
 * Anything a tool may declare as a schema: a Zod 4 schema (itself a Standard Schema), any
 * Standard Schema with the JSON Schema interface, or a plain JSON Schema object.
 */
export type SchemaLike = StandardSchemaV1<any, any> | JsonSchemaObject;

/** What validation accepts: the schema's input type; `Record<string, unknown>` for JSON Schema. */
export type InferInput<S> = S extends StandardSchemaV1<infer I, any> ? I : Record<string, unknown>;

/** What validation produces (defaults applied): the schema's output type; `Record<string, unknown>` for JSON Schema. */
export type InferOutput<S> = S extends StandardSchemaV1<any, infer O> ? O : Record<string, unknown>;
