/**
 * Zod 4, the first-class schema kind. Validation runs Zod itself on a deep "closed" copy of
 * the author's schema (every object strict, recursively; the author's objects untouched);
 * publication is `toJSONSchema` of that same copy, with the author's metadata carried over.
 * What JSON Schema cannot express (refinements, transforms, coercion, ...) is refused when
 * the schema is adapted, so that what is published is exactly what is enforced.
 *
 * Only `zod/v4/core` is used, which the author's own `zod` import has already loaded.
 */
import * as core from 'zod/v4/core';
import { fixedIssue, type Issue, type PathSegment } from '../protocol/issues.js';
import { isRecord } from '../protocol/record.js';
import type { JsonSchema, SchemaAdapter, SchemaIo, ValidationResult } from './adapter.js';
import { SchemaError } from './errors.js';
import { issues, onePerValue, unionIssues, type Bound } from './issues.js';
import { isMultipleOf } from './json-schema-subset.js';

type Schema = core.$ZodType;
type Def = core.$ZodTypeDef & Record<string, any>;
/** A Zod issue before finalization: it still knows the schema that raised it and its input. */
type RawIssue = core.$ZodRawIssue & Record<string, any>;

const defOf = (schema: Schema): Def => schema._zod.def as Def;
const make = (schema: Schema, def: Def): Schema => new schema._zod.constr(def) as Schema;

/** Kinds JSON Schema cannot carry, or that would make the runtime accept other values than published. */
const REFUSED: Record<string, string> = {
  transform: 'a transform (.transform, z.preprocess, codecs) changes values in ways JSON Schema cannot describe',
  pipe: 'a pipe (.pipe) validates against two schemas but only one can be published',
  catch: '.catch() accepts any input, which the published schema would not say',
  custom: 'z.custom()/z.instanceof() checks cannot be published as JSON Schema',
  success: 'z.success() cannot be published as JSON Schema',
  promise: 'promises are not JSON values',
  function: 'functions are not JSON values',
  date: 'dates are not JSON values; use z.iso.datetime() or z.iso.date()',
  bigint: 'bigints are not JSON values',
  symbol: 'symbols are not JSON values',
  undefined: 'undefined is not a JSON value; use .optional()',
  void: 'void is not a JSON value',
  map: 'maps are not JSON values; use z.record()',
  set: 'sets are not JSON values; use z.array()',
  nan: 'NaN is not a JSON value',
  file: 'files are not JSON values',
};

/**
 * The closed copy's integer check. Zod's `z.int()` and `.int()` are its "safeint" format: an
 * integer check plus the bounds ±(2^53 − 1), which `toJSONSchema` publishes as a minimum and
 * a maximum the author never wrote. The copy keeps the integer check alone, so the published
 * schema says `"type": "integer"` and nothing more, and the runtime accepts what it says
 * (ADR 0015). The bag's format is what makes `toJSONSchema` write "integer".
 */
const INTEGER = new core.$ZodCheck({ check: 'twylt_integer' as 'number_format' });
INTEGER._zod.onattach.push((schema) => {
  schema._zod.bag.format = 'int';
});
INTEGER._zod.check = (payload) => {
  if (!Number.isInteger(payload.value)) payload.issues.push({ code: 'invalid_type', expected: 'int', input: payload.value, inst: INTEGER, continue: false } as core.$ZodRawIssue);
};

const isSafeIntFormat = (check: core.$ZodCheck): boolean => {
  const def = check._zod.def as { check?: string; format?: string };
  return def.check === 'number_format' && def.format === 'safeint';
};

/**
 * `.multipleOf()` as published: Zod's own check tolerates a rounding error that grows with
 * the number (it takes 2^53 for a multiple of 5), so the copy checks what JSON Schema says.
 */
function publishedMultipleOf(check: core.$ZodCheck): core.$ZodCheck {
  const def = check._zod.def as core.$ZodCheckMultipleOfDef<number>;
  const copy = new core.$ZodCheckMultipleOf(def);
  copy._zod.check = (payload) => {
    const value = payload.value as number;
    if (!isMultipleOf(value, def.value)) payload.issues.push({ origin: 'number', code: 'not_multiple_of', divisor: def.value, input: value, inst: copy, continue: !def.abort });
  };
  return copy;
}

/** Wrappers whose `innerType` is closed in place. */
const WRAPPERS = new Set(['optional', 'exact_optional', 'nullable', 'default', 'prefault', 'nonoptional', 'readonly']);

interface Closed {
  root: Schema;
  /** Every copy beside the schema it was made from, to carry the author's metadata over. */
  pairs: Array<[original: Schema, copy: Schema]>;
}

/** The closed copy of `root`; throws a SchemaError for anything that cannot be published faithfully. */
function close(root: Schema): Closed {
  const copies = new Map<Schema, Schema>();
  const pairs: Closed['pairs'] = [];

  const visit = (schema: Schema, at: string): Schema => {
    const done = copies.get(schema);
    if (done) return done;
    const def = defOf(schema);
    const refuse = (why: string): never => {
      throw new SchemaError(`${at}: ${why}; twylt publishes exactly what it enforces, so this schema is refused`);
    };
    if (def.type === 'pipe' && (defOf(def.in).type === 'transform' || defOf(def.out).type === 'transform' || def.transform)) refuse(REFUSED.transform);
    if (REFUSED[def.type]) refuse(REFUSED[def.type]);
    if (def.coerce) refuse('coercion (z.coerce.*) accepts values the published schema would not');
    for (const check of (def.checks ?? []) as core.$ZodCheck[]) {
      const kind = check._zod.def.check;
      if (kind === 'custom') refuse('a refinement (.refine, .superRefine, .check) cannot be published as JSON Schema; check it in biz instead');
      if (kind === 'overwrite') refuse('a value rewrite (.trim, .toLowerCase, .overwrite) changes values in ways JSON Schema cannot describe');
    }

    const next: Def = { ...def };
    const register = (copy: Schema): Schema => {
      copies.set(schema, copy);
      pairs.push([schema, copy]);
      return copy;
    };
    switch (def.type) {
      // Recursion in Zod always passes through an object's shape or z.lazy: those copies
      // exist before their children are visited, so a recursive schema meets them again.
      case 'object': {
        const catchall = def.catchall as Schema | undefined;
        const open = !catchall || ['unknown', 'any'].includes(defOf(catchall).type);
        // z.looseObject({}): no declared field, any key: a free-form object, published and
        // checked as a map of anything (`dict[str, Any]` in the reference), not a closed model.
        if (catchall && open && Object.keys(def.shape).length === 0) return register(freeFormObject(def));
        const shape: Record<string, Schema> = {};
        next.shape = shape; // read lazily by Zod, filled below
        next.catchall = open ? new core.$ZodNever({ type: 'never' }) : visit(catchall, `${at}.<additional>`);
        const copy = register(make(schema, next));
        for (const key of Object.keys(def.shape)) shape[key] = visit(def.shape[key], `${at}.${key}`);
        return copy;
      }
      case 'number': {
        // z.int() is itself a safeint format check; .int() adds one to the checks.
        const checks = ((def.checks ?? []) as core.$ZodCheck[]).map((check) =>
          isSafeIntFormat(check) ? INTEGER : check._zod.def.check === 'multiple_of' ? publishedMultipleOf(check) : check,
        );
        if (def.format !== 'safeint') {
          next.checks = checks;
          break;
        }
        const { format: _format, check: _check, ...rest } = def;
        return register(new core.$ZodNumber({ ...rest, checks: [INTEGER, ...checks] } as core.$ZodNumberDef));
      }
      case 'lazy': {
        // z.json(): any JSON value, which every parsed input already is: published as `{}`.
        if (isZodJson(schema)) return register(new core.$ZodUnknown({ type: 'unknown' }));
        let inner: Schema | undefined;
        next.getter = () => inner;
        const copy = register(make(schema, next));
        inner = visit(def.getter(), at);
        return copy;
      }
      case 'array':
        next.element = visit(def.element, `${at}[]`);
        break;
      case 'tuple':
        next.items = def.items.map((item: Schema, i: number) => visit(item, `${at}[${i}]`));
        if (def.rest) next.rest = visit(def.rest, `${at}[...]`);
        break;
      case 'record':
        next.keyType = visit(def.keyType, `${at}.<key>`);
        next.valueType = visit(def.valueType, `${at}.<value>`);
        break;
      case 'union':
        next.options = def.options.map((option: Schema, i: number) => visit(option, `${at}|${i}`));
        break;
      case 'intersection':
        if (isObjectLike(def.left) || isObjectLike(def.right)) {
          refuse('an intersection of objects (.and, z.intersection) cannot be closed in JSON Schema; use .extend() or a spread of the shapes');
        }
        next.left = visit(def.left, at);
        next.right = visit(def.right, at);
        break;
      default:
        if (WRAPPERS.has(def.type)) next.innerType = visit(def.innerType, at);
    }
    return register(make(schema, next));
  };

  return { root: visit(root, '<root>'), pairs };
}

/** A free-form object: a record of string keys to the catch-all's values, published `additionalProperties: true`. */
function freeFormObject(def: Def): Schema {
  return new core.$ZodRecord({ type: 'record', keyType: new core.$ZodString({ type: 'string' }), valueType: def.catchall as Schema });
}

/** z.json() is `lazy(() => union([string, number, boolean, null, array(self), record(string, self)]))`. */
function isZodJson(schema: Schema): boolean {
  const inner = defOf(schema).getter();
  if (defOf(inner).type !== 'union') return false;
  const kinds = (defOf(inner).options as Schema[]).map((option) => {
    const def = defOf(option);
    if (def.type === 'array') return def.element === schema ? 'array' : '';
    if (def.type === 'record') return def.valueType === schema && defOf(def.keyType).type === 'string' && !def.keyType._zod.def.checks?.length ? 'record' : '';
    return def.checks?.length ? '' : def.type;
  });
  return kinds.join() === 'string,number,boolean,null,array,record';
}

function isObjectLike(schema: Schema): boolean {
  const def = defOf(schema);
  if (def.type === 'object' || def.type === 'record') return true;
  if (WRAPPERS.has(def.type)) return isObjectLike(def.innerType);
  if (def.type === 'lazy') return isObjectLike(def.getter());
  if (def.type === 'union') return def.options.some(isObjectLike);
  return false;
}

export function adaptZod(schema: Schema, io: SchemaIo): SchemaAdapter {
  const closed = close(schema);
  let published: JsonSchema | undefined;

  const publish = (): JsonSchema => {
    const metadata = core.registry<Record<string, unknown>>();
    for (const [original, copy] of closed.pairs) {
      const meta = core.globalRegistry.get(original);
      if (meta) metadata.add(copy, meta);
    }
    try {
      return tidyMaps(core.toJSONSchema(closed.root, { io, metadata, target: 'draft-2020-12', unrepresentable: 'throw' })) as JsonSchema;
    } catch (error) {
      throw new SchemaError(`This Zod schema cannot be published as JSON Schema: ${(error as Error).message}`);
    }
  };

  const finish = (value: unknown, payload: core.ParsePayload): ValidationResult =>
    payload.issues.length === 0
      ? { ok: true, value: payload.value }
      : { ok: false, issues: onePerValue(mapIssues(payload.issues as RawIssue[], value)) };

  return {
    jsonSchema: () => (published ??= publish()),
    validate(value) {
      const payload = closed.root._zod.run({ value, issues: [] }, { async: false });
      return payload instanceof Promise ? payload.then((p) => finish(value, p)) : finish(value, payload);
    },
  };
}

/** Keywords whose value is a schema, a list of schemas, or a map of names to schemas. */
const SUBSCHEMA = ['additionalProperties', 'propertyNames', 'items', 'not'];
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SUBSCHEMA_MAPS = ['properties', '$defs', 'patternProperties'];

/**
 * A Zod record publishes `propertyNames: {"type": "string"}` (every JSON key is a string) and,
 * for `z.any()`/`z.unknown()` values, `additionalProperties: {}`. Published as the reference
 * publishes `dict[str, str]` and `dict[str, Any]`: no key schema, `additionalProperties: true`.
 * Only schema positions are visited, never defaults or examples. Mutates the fresh output.
 */
function tidyMaps(node: unknown): unknown {
  if (!isRecord(node)) return node;
  const schema = node;
  const bare = (value: unknown, keys: string[]) => isRecord(value) && Object.keys(value).join() === keys.join();
  if (bare(schema.propertyNames, ['type']) && (schema.propertyNames as Record<string, unknown>).type === 'string') delete schema.propertyNames;
  if (bare(schema.additionalProperties, [])) schema.additionalProperties = true;
  for (const key of SUBSCHEMA) tidyMaps(schema[key]);
  for (const key of SUBSCHEMA_LISTS) if (Array.isArray(schema[key])) (schema[key] as unknown[]).forEach(tidyMaps);
  for (const key of SUBSCHEMA_MAPS) if (isRecord(schema[key])) Object.values(schema[key] as object).forEach(tidyMaps);
  return schema;
}

// --- Zod issues to TWYLT issues -------------------------------------------------------------

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) value = typeof value === 'object' && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

const segments = (path: readonly PropertyKey[] | undefined): PathSegment[] =>
  (path ?? []).map((key) => (typeof key === 'number' ? key : String(key)));

/** Maps raw Zod issues (paths relative to `root`) to TWYLT issues, in Zod's order, which is declaration order. */
function mapIssues(raw: readonly RawIssue[], root: unknown, base: readonly PathSegment[] = []): Issue[] {
  const out: Issue[] = [];
  for (const iss of raw) {
    const rel = segments(iss.path);
    const path = [...base, ...rel];
    const value = 'input' in iss ? iss.input : valueAt(root, rel);
    if (value === undefined && rel.length > 0) {
      // Zod reports a missing field as a type (or literal) failure of undefined.
      const parent = valueAt(root, rel.slice(0, -1));
      if (typeof parent === 'object' && parent !== null) {
        out.push(fixedIssue(path, 'required', parent));
        continue;
      }
    }
    switch (iss.code) {
      case 'invalid_type': {
        const integer = iss.expected === 'number' && iss.inst !== undefined && isIntegerSchema(iss.inst as Schema);
        out.push(typeIssue(path, integer ? 'int' : iss.expected, value));
        break;
      }
      case 'unrecognized_keys':
        for (const key of iss.keys as string[]) out.push(fixedIssue([...path, key], 'unknown_field', (value as Record<string, unknown>)[key]));
        break;
      case 'too_small':
      case 'too_big': {
        const small = iss.code === 'too_small';
        const limit = Number(small ? iss.minimum : iss.maximum);
        if (iss.origin === 'string') out.push((small ? issues.stringTooShort : issues.stringTooLong)(path, limit, value));
        else if (iss.origin === 'array') out.push((small ? issues.tooShort : issues.tooLong)(path, limit, value));
        else {
          const code: Bound = small ? (iss.inclusive ? 'greater_than_equal' : 'greater_than') : iss.inclusive ? 'less_than_equal' : 'less_than';
          out.push(issues.bound(path, code, limit, value));
        }
        break;
      }
      case 'not_multiple_of':
        out.push(issues.multipleOf(path, Number(iss.divisor), value));
        break;
      case 'invalid_format':
        out.push(formatIssue(iss, path, value));
        break;
      case 'invalid_value': {
        const kind = iss.inst ? defOf(iss.inst as Schema).type : 'literal';
        out.push((kind === 'enum' ? issues.enumeration : issues.literal)(path, iss.values, value));
        break;
      }
      case 'invalid_union':
        out.push(...unionFailure(iss, path, rel, root, value));
        break;
      case 'invalid_key':
        out.push(issues.invalidKey(path, String(iss.input)));
        break;
      default:
        out.push(issues.custom(path, String(iss.message ?? 'Invalid value'), value));
    }
  }
  return out;
}

/** A string format failure: the pattern for a regex, the format's name for email, uuid, url, ... */
function formatIssue(iss: RawIssue, path: PathSegment[], value: unknown): Issue {
  switch (iss.format) {
    case 'regex': {
      // Zod gives the pattern as "/source/flags"; JSON Schema and our message want the source.
      const pattern = iss.pattern as unknown;
      return issues.pattern(path, pattern instanceof RegExp ? pattern.source : String(pattern).replace(/^\/(.*)\/[a-z]*$/s, '$1'), value);
    }
    case 'starts_with':
      return issues.custom(path, `Must start with ${JSON.stringify(iss.prefix)}`, value, 'string_pattern_mismatch');
    case 'ends_with':
      return issues.custom(path, `Must end with ${JSON.stringify(iss.suffix)}`, value, 'string_pattern_mismatch');
    case 'includes':
      return issues.custom(path, `Must contain ${JSON.stringify(iss.includes)}`, value, 'string_pattern_mismatch');
    case 'template_literal':
      return issues.pattern(path, String(iss.pattern), value);
    default:
      return issues.format(path, String(iss.format), value);
  }
}

/** An integer number schema: its checks left an integer format in its bag (int32, uint32, the closed copy's INTEGER). */
function isIntegerSchema(schema: Schema): boolean {
  const format = (schema._zod.bag as { format?: unknown }).format;
  return typeof format === 'string' && format.includes('int');
}

function typeIssue(path: PathSegment[], expected: string, value: unknown): Issue {
  switch (expected) {
    case 'int':
      return issues.type(path, 'integer', value);
    case 'number':
    case 'string':
    case 'boolean':
    case 'null':
    case 'object':
    case 'array':
      return issues.type(path, expected, value);
    case 'record':
      return issues.type(path, 'map', value);
    case 'tuple':
      return issues.type(path, 'array', value);
    case 'never':
      return issues.notAllowed(path, value);
    default:
      return issues.custom(path, `Expected ${expected}`, value);
  }
}

function unionFailure(iss: RawIssue, path: PathSegment[], rel: PathSegment[], root: unknown, value: unknown): Issue[] {
  if (iss.discriminator !== undefined) {
    // Zod points at the tag; the reference reports the union itself, with the whole object.
    const at = path.slice(0, -1);
    const object = valueAt(root, rel.slice(0, -1));
    const key = String(iss.discriminator);
    const present = typeof object === 'object' && object !== null && (object as Record<string, unknown>)[key] !== undefined;
    return [present ? issues.tagInvalid(at, key, iss.options ?? [], object) : issues.tagNotFound(at, key, object)];
  }
  if (iss.inclusive === false && (iss.errors as unknown[]).length === 0) return [issues.ambiguousUnion(path, value)];
  const options = defOf(iss.inst as Schema).options as Schema[];
  return unionIssues(path, value, options.map((option) => {
    const def = defOf(option);
    // Zod finalized the alternatives' issues; re-running one gives its raw issues back.
    const rerun = option._zod.run({ value, issues: [] }, { async: false }) as core.ParsePayload;
    return {
      issues: mapIssues(rerun.issues as RawIssue[], value, path),
      nullOnly: def.type === 'null',
      literals: def.type === 'literal' ? def.values : def.type === 'enum' ? Object.values(def.entries) : undefined,
    };
  }));
}
