/**
 * Reading a published JSON Schema the way the checker needs it: fields in declaration
 * order, a valid sample value, values every conforming tool must reject, and closedness.
 * Only local `$ref`s (`#/...`) are followed; that is all a tool publishes.
 */
import type { JsonSchema } from '../client/types.js';

export interface Field {
  name: string;
  schema: JsonSchema;
  required: boolean;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Follow local `$ref`s from `schema` within `root`. */
export function deref(schema: unknown, root: JsonSchema): JsonSchema {
  let current = schema;
  for (let hops = 0; hops < 32 && isRecord(current) && typeof current.$ref === 'string'; hops++) {
    const ref = current.$ref;
    if (!ref.startsWith('#')) break;
    let target: unknown = root;
    for (const part of ref.slice(1).split('/').filter(Boolean)) {
      const key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
      target = isRecord(target) ? target[key] : undefined;
    }
    if (!isRecord(target)) break;
    // Keywords beside the $ref (description, default) belong to the field; the target gives the type.
    const { $ref: _ref, ...beside } = current;
    current = { ...target, ...beside };
  }
  return isRecord(current) ? current : {};
}

export function isObjectSchema(schema: JsonSchema): boolean {
  const type = schema.type;
  return type === 'object' || (Array.isArray(type) && type.includes('object')) || isRecord(schema.properties);
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
export const WRONG_TYPE_CODES: Record<string, string> = {
  integer: 'invalid_integer',
  number: 'invalid_number',
  boolean: 'invalid_boolean',
  string: 'invalid_string',
  object: 'model_type',
  array: 'list_type',
};

/**
 * JSON Pointers of object schemas that are not closed. An object is closed with
 * `additionalProperties: false`; a map (`additionalProperties` a schema) declares its
 * keys by that schema and counts as closed too.
 */
export function openObjects(schema: unknown): string[] {
  const open: string[] = [];
  const seen = new Set<unknown>();
  const visit = (node: unknown, pointer: string) => {
    if (!isRecord(node) || seen.has(node)) return;
    seen.add(node);
    if (isObjectSchema(node) && node.additionalProperties !== false && !isRecord(node.additionalProperties)) {
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
