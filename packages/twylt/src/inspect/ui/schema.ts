/**
 * What kind of form field a JSON Schema asks for. Only what a form can offer is told apart;
 * anything else (maps, free-form objects, unions of shapes, tuples, `{}`) is edited as JSON
 * in a field of its own. Subschemas are read only when their field is drawn, so recursive
 * schemas (`$ref` to an ancestor) cost nothing until opened.
 */
import { fromPlain, isObject, put, type Json, type JsonObject } from './json.js';

export type Schema = Record<string, unknown> | boolean;

interface Common {
  description?: string;
  title?: string;
  /** The schema's default, as a Json value. */
  default?: Json;
  /** anyOf/oneOf with `{"type": "null"}`, or a type list with "null". */
  nullable: boolean;
  /** A short name of the type for the label: `integer`, `array of object`... */
  type: string;
  /** Constraints in words, for the help line. */
  hints: string[];
}

export interface StringField extends Common {
  kind: 'string';
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
}

export interface NumberField extends Common {
  kind: 'number';
  integer: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
}

interface BooleanField extends Common {
  kind: 'boolean';
}

export interface ChoiceField extends Common {
  kind: 'choice';
  options: Json[];
}

export interface ObjectField extends Common {
  kind: 'object';
  properties: [name: string, schema: Schema][];
  required: string[];
}

export interface ArrayField extends Common {
  kind: 'array';
  items: Schema;
  minItems?: number;
  maxItems?: number;
}

interface JsonField extends Common {
  kind: 'json';
}

export type Field = StringField | NumberField | BooleanField | ChoiceField | ObjectField | ArrayField | JsonField;

const SAFE = Number.MAX_SAFE_INTEGER;

/** The field for `schema`; `root` is the document its `$ref`s point into. */
export function fieldOf(schema: Schema, root: Schema): Field {
  const node = resolve(schema, root);
  const common = commonOf(node);
  if (node === true || node === false || Object.keys(node).every((key) => ANNOTATIONS.has(key))) {
    return { ...common, kind: 'json', type: 'any JSON' };
  }

  // A nullable value: anyOf/oneOf [X, null], or a type list with "null".
  const union = (Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : undefined) as Schema[] | undefined;
  if (union) {
    const members = union.map((member) => resolve(member, root));
    const others = members.filter((member) => !isNullSchema(member));
    const nullable = others.length < members.length;
    if (others.length === 1) {
      const { anyOf: _a, oneOf: _o, ...outer } = node;
      const inner = fieldOf({ ...(others[0] as object), ...outer }, root);
      // A choice offers null among its options instead.
      if (inner.kind === 'choice') return nullable && !inner.options.includes(null) ? { ...inner, options: [...inner.options, null] } : inner;
      return { ...inner, nullable: inner.nullable || nullable, type: nullable ? `${inner.type} or null` : inner.type };
    }
    const literals = others.map(literalsOf);
    if (literals.every((values) => values !== undefined)) {
      return { ...common, kind: 'choice', options: [...literals.flat() as Json[], ...(nullable ? [null] : [])], type: 'choice' };
    }
    return { ...common, nullable, kind: 'json', type: `one of ${others.length} shapes` };
  }
  if (Array.isArray(node.allOf)) {
    const { allOf, ...rest } = node;
    const parts = (allOf as Schema[]).map((part) => resolve(part, root));
    if (parts.every(isObject)) return fieldOf(merge([rest, ...(parts as Record<string, unknown>[])]), root);
    return { ...common, kind: 'json', type: 'all of several shapes' };
  }

  const literals = literalsOf(node);
  if (literals) return { ...common, kind: 'choice', options: literals, type: Array.isArray(node.enum) ? 'choice' : 'constant' };

  let type = node.type;
  let nullable = false;
  if (Array.isArray(type)) {
    const others = type.filter((name) => name !== 'null');
    nullable = others.length < type.length;
    if (others.length !== 1) return { ...common, nullable, kind: 'json', type: type.join(' or ') };
    type = others[0];
  }
  if (type === undefined && isObject(node.properties)) type = 'object';
  const typed = { ...common, nullable };
  const suffix = nullable ? ' or null' : '';
  switch (type) {
    case 'string':
      return { ...typed, kind: 'string', type: `string${suffix}`, ...pick(node, ['minLength', 'maxLength'], 'number'), ...pick(node, ['pattern', 'format'], 'string'), hints: stringHints(node) };
    case 'number':
    case 'integer': {
      const bounds = pick(node, ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'], 'number');
      return { ...typed, kind: 'number', integer: type === 'integer', type: `${type}${suffix}`, ...bounds, hints: numberHints(bounds) };
    }
    case 'boolean':
      return { ...typed, kind: 'boolean', type: `boolean${suffix}` };
    case 'null':
      return { ...typed, kind: 'choice', options: [null], type: 'null' };
    case 'object': {
      const properties = isObject(node.properties) ? Object.entries(node.properties as Record<string, Schema>) : [];
      if (properties.length === 0) {
        const extra = node.additionalProperties;
        const kind = extra === undefined || extra === true ? 'free-form object' : extra === false ? 'empty object' : `map of ${fieldOf(extra as Schema, root).type}`;
        return { ...typed, kind: 'json', type: `${kind}${suffix}` };
      }
      const required = Array.isArray(node.required) ? (node.required as string[]) : [];
      return { ...typed, kind: 'object', properties, required, type: `object${suffix}` };
    }
    case 'array': {
      if (Array.isArray(node.prefixItems) || Array.isArray(node.items)) return { ...typed, kind: 'json', type: `tuple${suffix}` };
      const items = (node.items ?? true) as Schema;
      const counts = pick(node, ['minItems', 'maxItems'], 'number');
      return { ...typed, kind: 'array', items, type: `array of ${fieldOf(items, root).type}${suffix}`, ...counts, hints: rangeHint(counts.minItems, counts.maxItems, 'item') };
    }
    default:
      return { ...typed, kind: 'json', type: typeof type === 'string' ? type : 'any JSON' };
  }
}

/** The value a new field starts with: its default, a required constant, required containers filled; else unset. */
export function initialValue(field: Field, root: Schema, depth = 0): Json | undefined {
  if (field.default !== undefined) return field.default;
  if (field.kind === 'array') return [];
  if (field.kind !== 'object' || depth > 16) return undefined;
  const value: JsonObject = {};
  for (const [name, schema] of field.properties) {
    const child = fieldOf(schema, root);
    const required = field.required.includes(name);
    let start: Json | undefined;
    if (child.default !== undefined) start = child.default;
    else if (required && child.kind === 'choice' && child.options.length === 1) start = child.options[0];
    else if (required && child.kind === 'boolean' && !child.nullable) start = false;
    else if (required && (child.kind === 'object' || child.kind === 'array')) start = initialValue(child, root, depth + 1);
    if (start !== undefined) put(value, name, start);
  }
  return value;
}

/**
 * `value` with every object's keys in its schema's order (undeclared keys last), as the form
 * adds them in any order. Parts already in order are returned as they are, unchanged.
 */
export function arrange(value: Json | undefined, schema: Schema, root: Schema, depth = 0): Json | undefined {
  if (value === undefined || value === null || typeof value !== 'object' || depth > 64) return value;
  const field = fieldOf(schema, root);
  if (field.kind === 'array' && Array.isArray(value)) {
    const items = value.map((item) => arrange(item, field.items, root, depth + 1) ?? null);
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  if (field.kind !== 'object' || !isObject(value)) return value;
  const declared = field.properties.filter(([name]) => Object.hasOwn(value, name));
  const names = declared.map(([name]) => name);
  const keys = [...names, ...Object.keys(value).filter((key) => !names.includes(key))];
  const children = new Map(declared.map(([name, sub]) => [name, arrange(value[name], sub, root, depth + 1)!]));
  const current = Object.keys(value);
  if (keys.every((key, i) => key === current[i] && (!children.has(key) || children.get(key) === value[key]))) return value;
  const out: JsonObject = {};
  for (const key of keys) put(out, key, children.has(key) ? children.get(key)! : value[key]!);
  return out;
}

/** Follow local `$ref`s (`#/$defs/...`); keywords beside a `$ref` win over the target's. */
function resolve(schema: Schema, root: Schema): Schema {
  let node = schema;
  for (let hops = 0; isObject(node) && typeof node.$ref === 'string' && hops < 32; hops++) {
    const { $ref, ...beside } = node;
    const target = pointer(root, $ref as string);
    if (target === undefined) return { ...beside };
    node = typeof target === 'boolean' ? target : { ...target, ...beside };
  }
  return node;
}

function pointer(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    node = isObject(node) || Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined;
  }
  return typeof node === 'boolean' || isObject(node) ? (node as Schema) : undefined;
}

const ANNOTATIONS = new Set(['$schema', '$id', '$comment', '$defs', 'definitions', 'title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly']);

function commonOf(node: Schema): Common {
  const out: Common = { nullable: false, type: '', hints: [] };
  if (!isObject(node)) return out;
  if (typeof node.description === 'string') out.description = node.description;
  if (typeof node.title === 'string') out.title = node.title;
  if (node.default !== undefined) out.default = fromPlain(node.default);
  return out;
}

function isNullSchema(node: Schema): boolean {
  return isObject(node) && (node.type === 'null' || (Array.isArray(node.enum) && node.enum.length === 1 && node.enum[0] === null) || (Object.hasOwn(node, 'const') && node.const === null));
}

/** The values of an enum or a const, else undefined. */
function literalsOf(node: Schema): Json[] | undefined {
  if (!isObject(node)) return undefined;
  if (Array.isArray(node.enum)) return node.enum.map(fromPlain);
  if (Object.hasOwn(node, 'const')) return [fromPlain(node.const)];
  return undefined;
}

function merge(parts: Record<string, unknown>[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const part of parts) {
    for (const [key, value] of Object.entries(part)) {
      if (key === 'properties' && isObject(out.properties) && isObject(value)) out.properties = { ...out.properties, ...value };
      else if (key === 'required' && Array.isArray(out.required) && Array.isArray(value)) out.required = [...out.required, ...value];
      else out[key] = value;
    }
  }
  return out;
}

function pick<K extends string, T extends 'number' | 'string'>(node: Record<string, unknown>, keys: readonly K[], type: T): Partial<Record<K, T extends 'number' ? number : string>> {
  const out: Partial<Record<K, unknown>> = {};
  for (const key of keys) if (typeof node[key] === type) out[key] = node[key];
  return out as Partial<Record<K, T extends 'number' ? number : string>>;
}

function stringHints(node: Record<string, unknown>): string[] {
  const hints = rangeHint(node.minLength as number | undefined, node.maxLength as number | undefined, 'character');
  if (typeof node.pattern === 'string') hints.push(`pattern ${node.pattern}`);
  if (typeof node.format === 'string') hints.push(`format ${node.format}`);
  return hints;
}

function numberHints(bounds: Partial<Record<'minimum' | 'maximum' | 'exclusiveMinimum' | 'exclusiveMaximum' | 'multipleOf', number>>): string[] {
  const hints: string[] = [];
  // Zod's int() bounds every integer by the safe range: true, but no news.
  if (bounds.minimum !== undefined && bounds.minimum > -SAFE) hints.push(`≥ ${bounds.minimum}`);
  if (bounds.exclusiveMinimum !== undefined) hints.push(`> ${bounds.exclusiveMinimum}`);
  if (bounds.maximum !== undefined && bounds.maximum < SAFE) hints.push(`≤ ${bounds.maximum}`);
  if (bounds.exclusiveMaximum !== undefined) hints.push(`< ${bounds.exclusiveMaximum}`);
  if (bounds.multipleOf !== undefined) hints.push(`multiple of ${bounds.multipleOf}`);
  return hints;
}

function rangeHint(min: number | undefined, max: number | undefined, unit: string): string[] {
  const plural = (n: number) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (min !== undefined && max !== undefined) return [min === max ? `exactly ${plural(min)}` : `${min} to ${plural(max)}`];
  if (min !== undefined && min > 0) return [`at least ${plural(min)}`];
  if (max !== undefined) return [`at most ${plural(max)}`];
  return [];
}
