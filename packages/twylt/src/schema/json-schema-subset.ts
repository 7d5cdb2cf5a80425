/**
 * The JSON Schema subset twylt enforces, known without the validator: whether a schema stays
 * inside it (checked when a schema is adapted, so describe refuses what a call could not
 * enforce) and its closing for publication. Kept apart from json-validator.ts so that
 * describing a plain-JSON-Schema tool never loads the validator.
 */
import { isRecord } from '../protocol/record.js';
import type { JsonSchema } from './adapter.js';
import { SchemaError } from './errors.js';

export type Node = JsonSchema | boolean;

/** Keywords that only describe: kept in publication, never checked. `format` is an annotation in 2020-12. */
const ANNOTATIONS = new Set([
  '$schema', '$id', '$comment', 'title', 'description', 'default', 'examples',
  'deprecated', 'readOnly', 'writeOnly', 'format', 'contentEncoding', 'contentMediaType',
]);
/** Formats of the JSON Schema vocabulary: a failing pattern beside one is worded by its name. */
export const FORMAT_NAMES = new Set(['date-time', 'date', 'time', 'duration', 'email', 'idn-email', 'hostname', 'idn-hostname', 'ipv4', 'ipv6', 'uri', 'uri-reference', 'iri', 'uuid']);
const JSON_TYPES = new Set<string>(['integer', 'number', 'string', 'boolean', 'object', 'array', 'null']);
const SUBSCHEMA = new Set(['additionalProperties', 'propertyNames', 'items', 'not']);
const SUBSCHEMA_LISTS = new Set(['prefixItems', 'anyOf', 'oneOf', 'allOf']);
const SUBSCHEMA_MAPS = new Set(['properties', '$defs', 'definitions']);
const NUMBERS = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']);
const COUNTS = new Set(['minLength', 'maxLength', 'minItems', 'maxItems']);

export const hasOwn = (o: object, key: string): boolean => Object.hasOwn(o, key);

/** An object schema gets closed: it says `type: "object"` or declares properties. */
export function isObjectSchema(node: Node): boolean {
  if (typeof node !== 'object') return false;
  const type = node.type;
  return type === 'object' || (Array.isArray(type) && type.includes('object')) || isRecord(node.properties);
}

/**
 * An object schema without declared fields whose keys are otherwise allowed: a map
 * (`additionalProperties` a schema) or a free-form object (`true`). A non-object there is
 * `dict_type`; `model_type` is for objects with declared fields (docs/TWYLT.md section 4).
 */
export function isMapSchema(node: Node): boolean {
  return typeof node === 'object' && !isRecord(node.properties) && node.additionalProperties !== undefined && node.additionalProperties !== false;
}

/** A copy of `node` with `additionalProperties: false` on every object schema lacking the keyword. */
export function closeJsonSchema(node: Node): Node {
  if (typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (SUBSCHEMA.has(key)) out[key] = closeJsonSchema(value as Node);
    else if (SUBSCHEMA_LISTS.has(key) && Array.isArray(value)) out[key] = value.map((v) => closeJsonSchema(v as Node));
    else if (SUBSCHEMA_MAPS.has(key) && isRecord(value)) {
      const map: JsonSchema = {};
      for (const [name, sub] of Object.entries(value)) map[name] = closeJsonSchema(sub as Node);
      out[key] = map;
    } else out[key] = value;
  }
  if (isObjectSchema(node) && !hasOwn(node, 'additionalProperties')) out.additionalProperties = false;
  return out;
}

/**
 * `multipleOf` as JSON Schema validators (Ajv among them) compute it: the quotient is an
 * integer. Plain floating-point division: 0.3 is no multiple of 0.1, and far beyond 2^53 the
 * quotient is whatever the division rounds to. Both adapters use it, so the runtime and a
 * consumer reading the published schema agree.
 */
export function isMultipleOf(value: number, divisor: number): boolean {
  return Number.isInteger(value / divisor);
}

/** Throws a SchemaError when `root` uses what the validator cannot enforce (a keyword outside the subset, a broken `$ref`). */
export function assertSupportedJsonSchema(root: Node): void {
  inspect(root, root, '#', new Set());
}

function inspect(root: Node, node: Node, at: string, seen: Set<object>): void {
  if (typeof node === 'boolean') return;
  if (!isRecord(node)) throw new SchemaError(`${at}: a schema must be an object or a boolean`);
  if (seen.has(node)) return;
  seen.add(node);
  for (const [key, value] of Object.entries(node)) {
    const where = `${at}/${key}`;
    if (key.startsWith('x-') || ANNOTATIONS.has(key)) {
      if (key === '$id' && at !== '#') throw new SchemaError(`${where}: "$id" is only supported on the root schema`);
      continue;
    }
    if (SUBSCHEMA.has(key)) {
      if (key === 'items' && Array.isArray(value)) throw new SchemaError(`${where}: "items" as an array (draft-07 tuples) is not supported; use "prefixItems"`);
      inspect(root, value as Node, where, seen);
    } else if (SUBSCHEMA_LISTS.has(key)) {
      if (!Array.isArray(value)) throw new SchemaError(`${where}: must be an array of schemas`);
      value.forEach((v, i) => inspect(root, v as Node, `${where}/${i}`, seen));
    } else if (SUBSCHEMA_MAPS.has(key)) {
      if (!isRecord(value)) throw new SchemaError(`${where}: must be an object of schemas`);
      for (const [name, sub] of Object.entries(value)) inspect(root, sub as Node, `${where}/${name}`, seen);
    } else if (NUMBERS.has(key)) {
      if (typeof value !== 'number' || !Number.isFinite(value)) throw new SchemaError(`${where}: must be a number (the draft-04 boolean form is not supported)`);
      if (key === 'multipleOf' && value <= 0) throw new SchemaError(`${where}: must be greater than 0`);
    } else if (COUNTS.has(key)) {
      if (!Number.isInteger(value) || (value as number) < 0) throw new SchemaError(`${where}: must be a non-negative integer`);
    } else if (key === 'type') {
      const types = Array.isArray(value) ? value : [value];
      if (types.length === 0 || !types.every((t) => JSON_TYPES.has(t as string))) throw new SchemaError(`${where}: unknown type ${JSON.stringify(value)}`);
    } else if (key === 'required') {
      if (!Array.isArray(value) || !value.every((k) => typeof k === 'string')) throw new SchemaError(`${where}: must be an array of strings`);
    } else if (key === 'enum') {
      if (!Array.isArray(value)) throw new SchemaError(`${where}: must be an array`);
    } else if (key === 'uniqueItems') {
      if (typeof value !== 'boolean') throw new SchemaError(`${where}: must be a boolean`);
    } else if (key === 'pattern') {
      if (typeof value !== 'string') throw new SchemaError(`${where}: must be a string`);
      compilePattern(value, where);
    } else if (key === '$ref') {
      if (typeof value !== 'string') throw new SchemaError(`${where}: must be a string`);
      resolveRef(root, value, where);
    } else if (key !== 'const') {
      throw new SchemaError(`${where}: the JSON Schema keyword "${key}" is not supported (twylt refuses what it cannot enforce)`);
    }
  }
  const all = node.allOf as Node[] | undefined;
  if (all && all.filter((m) => isObjectSchema(derefSchema(root, m))).length > 1) {
    throw new SchemaError(`${at}/allOf: combining object schemas with allOf cannot be closed; merge their properties into one object schema`);
  }
}

/** A schema's `pattern` as a RegExp (unicode when it parses as one); throws a SchemaError when invalid. */
export function compilePattern(pattern: string, where = 'pattern'): RegExp {
try {
  return new RegExp(pattern, 'u');
} catch {
  try {
    return new RegExp(pattern);
  } catch (error) {
    throw new SchemaError(`${where}: invalid regular expression: ${(error as Error).message}`);
  }
}
}

const isLocalRef = (ref: string): boolean => ref === '#' || ref.startsWith('#/');

/**
 * What a local reference names in `root`: `#` or a JSON pointer in a URI fragment
 * (`#/$defs/a%20b`, `#/prefixItems/0`), own keys only. Undefined when it names nothing,
 * is not local (a URL, an anchor `#name`) or is malformed. Both the validator and the
 * conformance checker resolve through here.
 */
export function pointAt(root: unknown, ref: string): unknown {
  if (!isLocalRef(ref)) return undefined;
  let node = root;
  for (const raw of ref === '#' ? [] : ref.slice(2).split('/')) {
    let key: string;
    try {
      key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined; // a lone `%`: no key can be meant
    }
    node = isRecord(node) && hasOwn(node, key) ? node[key] : Array.isArray(node) && /^(0|[1-9]\d*)$/.test(key) ? node[Number(key)] : undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

/** Local references only: `#`, `#/$defs/...`, `#/definitions/...` (any JSON pointer into the root). */
export function resolveRef(root: Node, ref: string, where = '$ref'): Node {
  if (!isLocalRef(ref)) throw new SchemaError(`${where}: only local references ("#/$defs/...") are supported, not ${JSON.stringify(ref)}`);
  const node = pointAt(root, ref);
  if (node === undefined) throw new SchemaError(`${where}: cannot resolve ${JSON.stringify(ref)}`);
  if (typeof node !== 'boolean' && !isRecord(node)) throw new SchemaError(`${where}: ${JSON.stringify(ref)} is not a schema`);
  return node;
}

/** Follows `$ref`s from `node` to the schema they name. */
export function derefSchema(root: Node, node: Node): Node {
  let current = node;
  for (let hops = 0; typeof current === 'object' && typeof current.$ref === 'string' && hops < 32; hops++) current = resolveRef(root, current.$ref);
  return current;
}
