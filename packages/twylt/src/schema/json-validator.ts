/**
 * A small validator for the JSON Schema subset tools really use, producing TWYLT issues in
 * declaration order and applying defaults. The subset itself (what is refused, and the
 * closing of a schema for publication) is json-schema-subset.ts.
 *
 * Written by hand: no library reports Pydantic-shaped issues in declaration order and fills
 * defaults without a compile step that would cost every tool call (see docs/schemas.md).
 * Contracts are closed: an object schema without `additionalProperties` is treated, and
 * published, as `additionalProperties: false`. A keyword outside the subset is refused
 * when the schema is adapted, never ignored.
 */
import { fixedIssue, type Issue, type PathSegment } from '../protocol/issues.js';
import { isRecord } from '../protocol/record.js';
import type { JsonSchema, ValidationResult } from './adapter.js';
import { issues, unionIssues, type JsonType } from './issues.js';
import { compilePattern, derefSchema, FORMAT_NAMES, hasOwn, isMapSchema, isMultipleOf, isObjectSchema, resolveRef, type Node } from './json-schema-subset.js';

/** The keywords the validator reads, typed once. */
interface Keywords {
  $ref?: string;
  type?: JsonType | JsonType[];
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, Node>;
  required?: string[];
  additionalProperties?: Node;
  propertyNames?: Node;
  items?: Node;
  prefixItems?: Node[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: unknown;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  anyOf?: Node[];
  oneOf?: Node[];
  allOf?: Node[];
  not?: Node;
  default?: unknown;
}


/** A JSON object value (a Date or anything with toJSON is not one). */
function isJsonObject(v: unknown): v is Record<string, unknown> {
  return isRecord(v) && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => hasOwn(b, k) && jsonEqual((a as JsonSchema)[k], (b as JsonSchema)[k]));
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null': return value === null;
    case 'boolean': return typeof value === 'boolean';
    case 'string': return typeof value === 'string';
    case 'number': return typeof value === 'number' && Number.isFinite(value);
    case 'integer': return Number.isInteger(value);
    case 'array': return Array.isArray(value);
    default: return isJsonObject(value);
  }
}

/** Unicode code points, as JSON Schema counts string lengths. */
function codePoints(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) { n--; i++; }
    }
  }
  return n;
}

/** An own property, "__proto__" included: plain assignment of that key would replace the prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

const copyDefault = (value: unknown): unknown => (typeof value === 'object' && value !== null ? structuredClone(value) : value);

interface Tag {
  key: string;
  values: unknown[];
}

type Mode = 'check' | 'build';

export class JsonValidator {
  private readonly patterns = new Map<string, RegExp>();
  private readonly tags = new WeakMap<object, Tag | null>();

  /** `root` must have passed `assertSupportedJsonSchema` (json-schema-subset.ts). */
  constructor(private readonly root: Node) {}

  /**
   * Validates a JSON value. With `applyDefaults`, the accepted value comes back rebuilt in
   * declaration order with defaults filled in; otherwise only the verdict matters.
   */
  validate(value: unknown, applyDefaults: boolean): ValidationResult {
    const out: Issue[] = [];
    const result = this.check(this.root, value, [], out, applyDefaults ? 'build' : 'check');
    return out.length === 0 ? { ok: true, value: result } : { ok: false, issues: out };
  }

  private regex(pattern: string): RegExp {
    let regex = this.patterns.get(pattern);
    if (!regex) this.patterns.set(pattern, (regex = compilePattern(pattern)));
    return regex;
  }

  private resolve(ref: string): Node {
    return resolveRef(this.root, ref);
  }

  private deref(node: Node): Node {
    return derefSchema(this.root, node);
  }

  // --- validation -------------------------------------------------------------------------

  private check(node: Node, value: unknown, path: PathSegment[], out: Issue[], mode: Mode): unknown {
    if (node === true) return value;
    if (node === false) {
      out.push(issues.notAllowed(path, value));
      return value;
    }
    const s = node as Keywords;
    const before = out.length;
    if (s.$ref !== undefined) {
      value = this.check(this.resolve(s.$ref), value, path, out, mode);
      if (out.length > before) return value;
    }
    if (s.type !== undefined && !this.checkType(s.type, isMapSchema(s as JsonSchema), value, path, out)) return value;
    if (hasOwn(s, 'const') && !jsonEqual(s.const, value)) {
      out.push(issues.literal(path, [s.const], value));
      return value;
    }
    if (s.enum !== undefined && !s.enum.some((e) => jsonEqual(e, value))) {
      out.push(issues.enumeration(path, s.enum, value));
      return value;
    }
    if (typeof value === 'number') this.checkNumber(s, value, path, out);
    else if (typeof value === 'string') this.checkString(s, value, path, out);
    else if (Array.isArray(value)) value = this.checkArray(s, value, path, out, mode);
    else if (isJsonObject(value)) value = this.checkObject(s, value, path, out, mode);
    if (out.length > before) return value;

    if (s.allOf) for (const member of s.allOf) value = this.check(member, value, path, out, mode);
    if (s.anyOf) value = this.checkUnion(s.anyOf, false, value, path, out, mode);
    if (s.oneOf) value = this.checkUnion(s.oneOf, true, value, path, out, mode);
    if (s.not !== undefined && out.length === before && this.accepts(s.not, value)) out.push(issues.notAllowed(path, value));
    return value;
  }

  private accepts(node: Node, value: unknown): boolean {
    const scratch: Issue[] = [];
    this.check(node, value, [], scratch, 'check');
    return scratch.length === 0;
  }

  /** `map`: the object this schema describes has no declared fields (see isMapSchema). */
  private checkType(type: JsonType | JsonType[], map: boolean, value: unknown, path: PathSegment[], out: Issue[]): boolean {
    const named = (t: JsonType) => (t === 'object' && map ? 'map' : t);
    if (typeof type === 'string') {
      if (hasType(value, type)) return true;
      out.push(issues.type(path, named(type), value));
      return false;
    }
    if (type.some((t) => hasType(value, t))) return true;
    const expected = type.filter((t) => t !== 'null' && !(t === 'integer' && type.includes('number')));
    if (expected.length === 1) out.push(issues.type(path, named(expected[0]), value));
    else if (expected.length === 0) out.push(issues.type(path, 'null', value));
    else out.push(issues.noUnionMatch(path, value));
    return false;
  }

  /** One issue per value: the first failing bound, in a fixed order (see issues.ts). */
  private checkNumber(s: Keywords, value: number, path: PathSegment[], out: Issue[]): void {
    if (s.minimum !== undefined && !(value >= s.minimum)) out.push(issues.bound(path, 'greater_than_equal', s.minimum, value));
    else if (s.exclusiveMinimum !== undefined && !(value > s.exclusiveMinimum)) out.push(issues.bound(path, 'greater_than', s.exclusiveMinimum, value));
    else if (s.maximum !== undefined && !(value <= s.maximum)) out.push(issues.bound(path, 'less_than_equal', s.maximum, value));
    else if (s.exclusiveMaximum !== undefined && !(value < s.exclusiveMaximum)) out.push(issues.bound(path, 'less_than', s.exclusiveMaximum, value));
    else if (s.multipleOf !== undefined && !isMultipleOf(value, s.multipleOf)) out.push(issues.multipleOf(path, s.multipleOf, value));
  }

  private checkString(s: Keywords, value: string, path: PathSegment[], out: Issue[]): void {
    const length = s.minLength !== undefined || s.maxLength !== undefined ? codePoints(value) : 0;
    if (s.minLength !== undefined && length < s.minLength) out.push(issues.stringTooShort(path, s.minLength, value));
    else if (s.maxLength !== undefined && length > s.maxLength) out.push(issues.stringTooLong(path, s.maxLength, value));
    else if (s.pattern !== undefined && !this.regex(s.pattern).test(value)) {
      out.push(FORMAT_NAMES.has(s.format as string) ? issues.format(path, s.format as string, value) : issues.pattern(path, s.pattern, value));
    }
  }

  /** Items first; the array's own size checks only when its items are fine. */
  private checkArray(s: Keywords, array: unknown[], path: PathSegment[], out: Issue[], mode: Mode): unknown[] {
    const before = out.length;
    const prefix = s.prefixItems ?? [];
    let result = array;
    for (let i = 0; i < array.length; i++) {
      const item = i < prefix.length ? prefix[i] : s.items;
      if (item === undefined) continue;
      if (item === false) {
        out.push(issues.tooLong(path, prefix.length, array));
        break;
      }
      path.push(i);
      const checked = this.check(item, array[i], path, out, mode);
      path.pop();
      if (checked !== array[i] && mode === 'build') {
        if (result === array) result = array.slice();
        result[i] = checked;
      }
    }
    if (out.length > before) return array;
    if (s.minItems !== undefined && array.length < s.minItems) out.push(issues.tooShort(path, s.minItems, array));
    else if (s.maxItems !== undefined && array.length > s.maxItems) out.push(issues.tooLong(path, s.maxItems, array));
    else if (s.uniqueItems && array.some((x, i) => array.findIndex((y) => jsonEqual(x, y)) !== i)) out.push(issues.uniqueItems(path, array));
    return result;
  }

  /**
   * Declared fields in declaration order (missing ones reported with the whole object),
   * then the other keys in input order. An absent `additionalProperties` means closed.
   */
  private checkObject(s: Keywords, object: Record<string, unknown>, path: PathSegment[], out: Issue[], mode: Mode): Record<string, unknown> {
    const before = out.length;
    const properties = s.properties ?? {};
    const required = s.required ?? [];
    const result: Record<string, unknown> | undefined = mode === 'build' ? {} : undefined;
    for (const key of Object.keys(properties)) {
      const sub = properties[key];
      path.push(key);
      if (object[key] !== undefined && hasOwn(object, key)) {
        const checked = this.check(sub, object[key], path, out, mode);
        if (result) setOwn(result, key, checked);
      } else if (required.includes(key)) {
        out.push(fixedIssue(path, 'required', object));
      } else if (result && typeof sub === 'object' && hasOwn(sub, 'default')) {
        setOwn(result, key, copyDefault(sub.default));
      }
      path.pop();
    }
    for (const key of required) {
      if (!hasOwn(properties, key) && (object[key] === undefined || !hasOwn(object, key))) {
        path.push(key);
        out.push(fixedIssue(path, 'required', object));
        path.pop();
      }
    }
    const additional = s.additionalProperties ?? !isObjectSchema(s as JsonSchema);
    for (const key of Object.keys(object)) {
      if (hasOwn(properties, key) || object[key] === undefined) continue;
      path.push(key);
      if (s.propertyNames !== undefined && !this.accepts(s.propertyNames, key)) out.push(issues.invalidKey(path, key));
      else if (additional === false) out.push(fixedIssue(path, 'unknown_field', object[key]));
      else if (additional === true) {
        if (result) setOwn(result, key, object[key]);
      } else {
        const checked = this.check(additional, object[key], path, out, mode);
        if (result) setOwn(result, key, checked);
      }
      path.pop();
    }
    return result && out.length === before ? result : object;
  }

  private checkUnion(members: Node[], exclusive: boolean, value: unknown, path: PathSegment[], out: Issue[], mode: Mode): unknown {
    const tag = isJsonObject(value) ? this.tagOf(members) : null;
    if (tag) {
      const object = value as Record<string, unknown>;
      if (object[tag.key] === undefined) {
        out.push(issues.tagNotFound(path, tag.key, object));
        return value;
      }
      const index = tag.values.findIndex((v) => jsonEqual(v, object[tag.key]));
      if (index === -1) {
        out.push(issues.tagInvalid(path, tag.key, tag.values, object));
        return value;
      }
      return this.check(members[index], value, path, out, mode);
    }
    const failures: Issue[][] = [];
    let result = value;
    let matches = 0;
    for (const member of members) {
      const sub: Issue[] = [];
      const checked = this.check(member, value, path, sub, mode);
      if (sub.length === 0) {
        if (!exclusive) return checked;
        if (matches++ === 0) result = checked;
      }
      failures.push(sub);
    }
    if (matches === 1) return result;
    if (matches > 1) out.push(issues.ambiguousUnion(path, value));
    else {
      out.push(...unionIssues(path, value, members.map((m, i) => {
        const target = this.deref(m);
        const t = typeof target === 'object' ? (target as Keywords) : {};
        const literals = hasOwn(t, 'const') ? [t.const] : t.enum;
        const nullOnly = t.type === 'null' || (hasOwn(t, 'const') && t.const === null);
        return { issues: failures[i], nullOnly, literals };
      })));
    }
    return value;
  }

  /** An implicit discriminator: a required property every alternative fixes to its own constant. */
  private tagOf(members: Node[]): Tag | null {
    const cached = this.tags.get(members);
    if (cached !== undefined) return cached;
    let tag: Tag | null = null;
    const objects = members.map((m) => this.deref(m));
    if (objects.length > 1 && objects.every((o) => typeof o === 'object' && isRecord(o.properties))) {
      const schemas = objects as Keywords[];
      const fixed = (o: Keywords, key: string): { ok: boolean; value?: unknown } => {
        const p = o.properties?.[key];
        if (typeof p !== 'object' || !o.required?.includes(key)) return { ok: false };
        const target = this.deref(p) as Keywords;
        if (hasOwn(target, 'const')) return { ok: true, value: target.const };
        if (target.enum?.length === 1) return { ok: true, value: target.enum[0] };
        return { ok: false };
      };
      for (const key of Object.keys(schemas[0].properties ?? {})) {
        const values = schemas.map((o) => fixed(o, key));
        if (values.every((v) => v.ok) && new Set(values.map((v) => JSON.stringify(v.value))).size === values.length) {
          tag = { key, values: values.map((v) => v.value) };
          break;
        }
      }
    }
    this.tags.set(members, tag);
    return tag;
  }
}
