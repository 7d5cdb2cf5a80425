/**
 * Reading a published JSON Schema the way the checker needs it: fields in declaration
 * order, a valid sample value, values every conforming tool must reject, and closedness.
 * Only local `$ref`s (`#/...`) are followed; that is all a tool publishes.
 */
import type { JsonSchema } from '../client/types.js';
import { isRecord } from '../protocol/record.js';
import { isObjectSchema, pointAt } from '../schema/json-schema-subset.js';

export interface Field {
  name: string;
  schema: JsonSchema;
  required: boolean;
}

/** Follow local `$ref`s from `schema` within `root`; one that names no object schema is left as it is. */
export function deref(schema: unknown, root: JsonSchema): JsonSchema {
  let current = schema;
  for (let hops = 0; hops < 32 && isRecord(current) && typeof current.$ref === 'string'; hops++) {
    const target = pointAt(root, current.$ref);
    if (!isRecord(target)) break;
    // Keywords beside the $ref (description, default) belong to the field; the target gives the type.
    const { $ref: _ref, ...beside } = current;
    current = { ...target, ...beside };
  }
  return isRecord(current) ? current : {};
}

/**
 * An object without declared fields whose keys are the author's declared intent: a map
 * (`additionalProperties` a schema: `dict[str, str]`) or a free-form object (`true`, or no
 * keyword: `dict[str, Any]`). A model is an object with `properties`, or one closed with
 * `additionalProperties: false` and nothing in it (docs/TWYLT.md section 4).
 */
export function isMapSchema(schema: JsonSchema): boolean {
  return isObjectSchema(schema) && !isRecord(schema.properties) && schema.additionalProperties !== false;
}

/** Keywords that describe and never constrain: a schema with only these is `Any`. */
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$comment', 'deprecated', 'readOnly', 'writeOnly']);

/** `{}`: any JSON value (`Any` in the reference). */
function isAnySchema(schema: unknown): boolean {
  return schema === true || (isRecord(schema) && Object.keys(schema).every((key) => ANNOTATIONS.has(key) || key.startsWith('x-')));
}

/** A free-form value: `Any`, an object of anything (`dict[str, Any]`), or an array of anything (`list[Any]`). */
export type FreeForm = 'any' | 'object' | 'array';

export function freeFormKind(schema: JsonSchema): FreeForm | undefined {
  if (isAnySchema(schema)) return 'any';
  const only = (allowed: string[]) => Object.keys(schema).every((key) => allowed.includes(key) || ANNOTATIONS.has(key) || key.startsWith('x-'));
  if (schema.type === 'object' && only(['type', 'additionalProperties']) && (schema.additionalProperties === undefined || schema.additionalProperties === true)) return 'object';
  if (schema.type === 'array' && only(['type', 'items']) && (schema.items === undefined || isAnySchema(schema.items))) return 'array';
  return undefined;
}

/**
 * The schema inside an optional value: the one branch beside `{"type": "null"}` of an
 * `anyOf`/`oneOf` (`X | None` in the reference), or `type: [X, "null"]` as `type: X`.
 */
function nonNullBranch(schema: JsonSchema, root: JsonSchema): JsonSchema | undefined {
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (!Array.isArray(branches) || !branches.some(isNullSchema)) continue;
    const rest = branches.filter((branch) => !isNullSchema(branch));
    return rest.length === 1 ? deref(rest[0], root) : undefined;
  }
  const type = schema.type;
  if (Array.isArray(type) && type.length === 2 && type.includes('null')) return { ...schema, type: type.find((t) => t !== 'null') };
  return undefined;
}

/** The field's value schema, with an optional's null branch set aside (`nullable` says whether there was one). */
export function valueSchema(field: Field, root: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  const inner = nonNullBranch(field.schema, root);
  return inner ? { schema: inner, nullable: true } : { schema: field.schema, nullable: false };
}

export function fieldsOf(schema: JsonSchema, root: JsonSchema): Field[] {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  return Object.entries(properties).map(([name, sub]) => ({ name, schema: deref(sub, root), required: required.includes(name) }));
}

/** The single JSON type a field accepts, when it is exactly one and the field is not nullable, enum, const or format. */
export function plainType(schema: JsonSchema): string | undefined {
  if (typeof schema.type !== 'string' || schema.type === 'null') return undefined;
  if ('enum' in schema || 'const' in schema || 'format' in schema) return undefined;
  if (['anyOf', 'oneOf', 'allOf', 'not', 'if'].some((key) => key in schema)) return undefined;
  return schema.type;
}

const FORMAT_SAMPLES: Record<string, string> = {
  'date-time': '2024-01-01T00:00:00Z',
  date: '2024-01-01',
  time: '12:00:00Z',
  email: 'someone@example.com',
  uri: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
};

/** A value the schema accepts, or undefined when none could be built. */
export function sample(input: unknown, root: JsonSchema, depth = 0): unknown {
  if (depth > 8) return undefined;
  const schema = deref(input, root);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches)) {
      const ordered = [...branches].sort((a, b) => Number(isNullSchema(a)) - Number(isNullSchema(b)));
      for (const branch of ordered) {
        const value = sample(branch, root, depth + 1);
        if (value !== undefined) return value;
      }
      return undefined;
    }
  }
  const types = Array.isArray(schema.type) ? schema.type.filter((t) => t !== 'null') : [schema.type ?? (isObjectSchema(schema) ? 'object' : undefined)];
  switch (types[0]) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const field of fieldsOf(schema, root)) {
        if (!field.required) continue;
        const value = sample(field.schema, root, depth + 1);
        if (value === undefined) return undefined;
        out[field.name] = value;
      }
      return out;
    }
    case 'array': {
      const count = typeof schema.minItems === 'number' ? schema.minItems : 0;
      if (count === 0) return [];
      const item = sample(schema.items, root, depth + 1);
      return item === undefined ? undefined : Array.from({ length: count }, () => item);
    }
    case 'string':
      return sampleString(schema);
    case 'integer':
    case 'number':
      return sampleNumber(schema, types[0] === 'integer');
    case 'boolean':
      return false;
    case 'null':
      return null;
    case undefined:
      return 'x';
    default:
      return undefined;
  }
}

function isNullSchema(schema: unknown): boolean {
  return isRecord(schema) && schema.type === 'null';
}

function sampleString(schema: JsonSchema): string | undefined {
  if (typeof schema.format === 'string' && FORMAT_SAMPLES[schema.format]) return FORMAT_SAMPLES[schema.format];
  const min = typeof schema.minLength === 'number' ? schema.minLength : 1;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  const candidates = ['x'.repeat(Math.max(min, 1)), 'a', 'example', '0', 'a1', 'A', 'x'.repeat(min)];
  let pattern: RegExp | undefined;
  if (typeof schema.pattern === 'string') {
    try {
      pattern = new RegExp(schema.pattern, 'u');
    } catch {
      return undefined;
    }
  }
  return candidates.find((text) => text.length >= min && text.length <= max && (!pattern || pattern.test(text)));
}

function sampleNumber(schema: JsonSchema, integer: boolean): number | undefined {
  const num = (key: string) => (typeof schema[key] === 'number' ? (schema[key] as number) : undefined);
  let value = num('minimum') ?? (num('exclusiveMinimum') !== undefined ? num('exclusiveMinimum')! + 1 : 0);
  const max = num('maximum') ?? (num('exclusiveMaximum') !== undefined ? num('exclusiveMaximum')! - 1 : undefined);
  if (max !== undefined && value > max) value = max;
  if (integer) value = Math.ceil(value);
  const step = num('multipleOf');
  if (step) value = Math.ceil(value / step) * step;
  return value;
}

/** One value that breaks exactly one keyword of a field, with the issue codes a tool may report for it. */
export interface Violation {
  keyword: string;
  value: unknown;
  codes: string[];
}

/** Values every conforming tool must reject for this field (no lax-mode coercion can save them). */
export function violations(schema: JsonSchema, root: JsonSchema): Violation[] {
  const out: Violation[] = [];
  const num = (key: string) => (typeof schema[key] === 'number' ? (schema[key] as number) : undefined);
  const type = schema.type;
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string') && type !== 'null') {
    out.push({ keyword: 'enum', value: '__twylt_not_a_member__', codes: ['enum', 'literal_error'] });
  }
  if (typeof schema.const === 'string') out.push({ keyword: 'const', value: '__twylt_not_the_constant__', codes: ['literal_error'] });
  if (plainType(schema) === undefined || 'multipleOf' in schema) return out;
  const integer = type === 'integer';
  if (type === 'integer' || type === 'number') {
    const min = num('minimum');
    const exMin = num('exclusiveMinimum');
    const max = num('maximum');
    const exMax = num('exclusiveMaximum');
    if (min !== undefined) out.push({ keyword: 'minimum', value: integer ? Math.ceil(min) - 1 : min - 1, codes: ['greater_than_equal'] });
    if (exMin !== undefined) out.push({ keyword: 'exclusiveMinimum', value: integer ? Math.floor(exMin) : exMin, codes: ['greater_than'] });
    if (max !== undefined) out.push({ keyword: 'maximum', value: integer ? Math.floor(max) + 1 : max + 1, codes: ['less_than_equal'] });
    if (exMax !== undefined) out.push({ keyword: 'exclusiveMaximum', value: integer ? Math.ceil(exMax) : exMax, codes: ['less_than'] });
  }
  if (type === 'string' && !('pattern' in schema)) {
    const minLength = num('minLength');
    const maxLength = num('maxLength');
    if (minLength !== undefined && minLength > 0) out.push({ keyword: 'minLength', value: 'x'.repeat(minLength - 1), codes: ['string_too_short'] });
    if (maxLength !== undefined) out.push({ keyword: 'maxLength', value: 'x'.repeat(maxLength + 1), codes: ['string_too_long'] });
  }
  if (type === 'array') {
    const item = sample(schema.items, root);
    const minItems = num('minItems');
    const maxItems = num('maxItems');
    if (item !== undefined && minItems !== undefined && minItems > 0) {
      out.push({ keyword: 'minItems', value: Array.from({ length: minItems - 1 }, () => item), codes: ['too_short'] });
    }
    if (item !== undefined && maxItems !== undefined) {
      out.push({ keyword: 'maxItems', value: Array.from({ length: maxItems + 1 }, () => item), codes: ['too_long'] });
    }
  }
  return out;
}

/** The issue code a wrong-typed value must produce, by the field's JSON type. */
const WRONG_TYPE_CODES: Record<string, string> = {
  integer: 'invalid_integer',
  number: 'invalid_number',
  boolean: 'invalid_boolean',
  string: 'invalid_string',
  object: 'model_type',
  array: 'list_type',
};

/** The code of a wrong type for a schema of one plain type: `dict_type` for a map or free-form object. */
export function wrongTypeCode(schema: JsonSchema): string | undefined {
  const type = plainType(schema);
  if (type === 'object' && isMapSchema(schema)) return 'dict_type';
  return type === undefined ? undefined : WRONG_TYPE_CODES[type];
}

/**
 * JSON Pointers of object schemas that are not closed. Closed contracts concern models,
 * objects with declared `properties`: each says `additionalProperties: false`, or gives a
 * schema to its extra keys. A map or a free-form object (no `properties`) is the author's
 * declared intent, never open. The root is the tool's input or output: a model either way.
 */
export function openObjects(schema: unknown): string[] {
  const open: string[] = [];
  const seen = new Set<unknown>();
  const visit = (node: unknown, pointer: string) => {
    if (!isRecord(node) || seen.has(node)) return;
    seen.add(node);
    // The root is the tool's input or output model, with or without fields.
    const model = isRecord(node.properties) || (pointer === '' && isObjectSchema(node));
    if (model && node.additionalProperties !== false && !isRecord(node.additionalProperties)) {
      open.push(pointer || '/');
    }
    for (const key of ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'] as const) {
      if (isRecord(node[key])) for (const [name, sub] of Object.entries(node[key])) visit(sub, `${pointer}/${key}/${name}`);
    }
    for (const key of ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames'] as const) {
      if (Array.isArray(node[key])) (node[key] as unknown[]).forEach((sub, i) => visit(sub, `${pointer}/${key}/${i}`));
      else visit(node[key], `${pointer}/${key}`);
    }
    for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) {
      if (Array.isArray(node[key])) (node[key] as unknown[]).forEach((sub, i) => visit(sub, `${pointer}/${key}/${i}`));
    }
  };
  visit(schema, '');
  return open;
}
