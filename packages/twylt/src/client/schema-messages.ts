/**
 * Ajv's errors as issues a model can act on: each message says what would be accepted (the
 * allowed values, the type, the bound, the pattern, the property names) and what was sent.
 * Ajv's own messages ("must be equal to one of the allowed values") never name the values,
 * so a model refused by a consumer-side check could only guess again. Every consumer's
 * check goes through `ajvIssues`: the client's SchemaMismatchError, and through it
 * twylt-mcp, twylt-ai, `twylt call --validate` and the inspect page.
 */
import { isRecord, jsonKind } from '../protocol/record.js';
import type { SchemaIssue } from './errors.js';

/** One Ajv error, compiled with `verbose: true` (which adds `schema`, `parentSchema`, `data`). */
export interface AjvError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params?: Record<string, unknown>;
  message?: string;
  schema?: unknown;
  parentSchema?: unknown;
  data?: unknown;
}

/** How many allowed values or property names a message lists before "and N more". */
const MAX_LISTED = 20;
/** How long such a list may grow, in characters, before it is cut. */
const MAX_LIST_CHARS = 400;
/** How much of a refused value a message quotes. */
const MAX_VALUE_CHARS = 60;
/** How deep an alternative of anyOf/oneOf is described. */
const MAX_SUMMARY_DEPTH = 2;

/**
 * The issues of one failed validation, in Ajv's order. A failed anyOf/oneOf is reported by
 * the errors of the one alternative that fits the value (as the tool itself would), else as
 * one issue that summarises the alternatives; missing and unknown properties of one object
 * are each reported once, together. `root` resolves local `$ref`s in those summaries.
 */
export function ajvIssues(errors: readonly AjvError[], root: unknown): SchemaIssue[] {
  const kept: AjvError[] = [];
  const issues = new Map<AjvError, SchemaIssue[]>();
  for (const error of errors) {
    if (!isUnionFailure(error)) {
      kept.push(error);
      continue;
    }
    // Ajv reports an alternative's errors just before the union's own error.
    const branches: AjvError[] = [];
    while (kept.length > 0 && belongsTo(kept[kept.length - 1]!, error)) branches.unshift(kept.pop()!);
    kept.push(error);
    issues.set(error, unionIssues(error, branches, root));
  }
  return merge(kept.flatMap((error): (AjvError | SchemaIssue)[] => issues.get(error) ?? [error]));
}

function isUnionFailure(error: AjvError): boolean {
  return (error.keyword === 'anyOf' || error.keyword === 'oneOf') && !Array.isArray(error.params?.passingSchemas);
}

/** Whether `error` comes from inside the alternatives of `union`, not from a keyword beside it. */
function belongsTo(error: AjvError, union: AjvError): boolean {
  const here = union.instancePath;
  if (error.instancePath !== here && !error.instancePath.startsWith(`${here}/`)) return false;
  if (branchOf(error, union) !== undefined) return true;
  // From a `$ref` of an alternative (a keyword beside the union shares the union's parent path).
  const parent = union.schemaPath.slice(0, union.schemaPath.lastIndexOf('/') + 1);
  return !error.schemaPath.startsWith(parent);
}

/** Which alternative an error came from: by its schema path, or by the `$ref` it went through. */
function branchOf(error: AjvError, union: AjvError): number | undefined {
  const inside = `${union.schemaPath}/`;
  if (error.schemaPath.startsWith(inside)) return Number(error.schemaPath.slice(inside.length).split('/', 1)[0]);
  const alternatives = Array.isArray(union.schema) ? union.schema : [];
  const found = alternatives.findIndex((branch) => isRecord(branch) && typeof branch.$ref === 'string' && error.schemaPath.startsWith(`${branch.$ref}/`));
  return found === -1 ? undefined : found;
}

function unionIssues(union: AjvError, errors: readonly AjvError[], root: unknown): SchemaIssue[] {
  const alternatives = Array.isArray(union.schema) ? union.schema : [];
  const byBranch = alternatives.map(() => [] as AjvError[]);
  let unplaced = false;
  for (const error of errors) {
    const branch = branchOf(error, union);
    if (branch === undefined || byBranch[branch] === undefined) unplaced = true;
    else byBranch[branch].push(error);
  }
  const fitting = byBranch.filter((branchErrors) => branchErrors.length > 0 && !branchErrors.some((error) => rulesOut(error, union.instancePath)));
  if (!unplaced && fitting.length === 1) return ajvIssues(fitting[0]!, root);
  const summary = alternatives.map((branch) => summarise(branch, root, 0));
  return [{ path: union.instancePath, message: `must be one of these: ${summary.join('; ')} (got ${shown(union.data)})`, keyword: union.keyword }];
}

/**
 * An error that says the value is not of this alternative's kind at all: the wrong type
 * for it, or the wrong value of a field that tells the alternatives apart (`"kind": "circle"`).
 */
function rulesOut(error: AjvError, unionPath: string): boolean {
  const child = error.instancePath.startsWith(`${unionPath}/`) && !error.instancePath.slice(unionPath.length + 1).includes('/');
  if (error.instancePath === unionPath) return ['type', 'const', 'enum', 'anyOf', 'oneOf'].includes(error.keyword);
  return child && (error.keyword === 'const' || error.keyword === 'enum');
}

/**
 * The issues of `errors`, where consecutive missing (or unknown) properties of one object
 * make one issue that names them all.
 */
function merge(errors: readonly (AjvError | SchemaIssue)[]): SchemaIssue[] {
  const out: SchemaIssue[] = [];
  let names: unknown[] = [];
  for (const [i, error] of errors.entries()) {
    if (!('schemaPath' in error)) {
      out.push(error);
      continue;
    }
    const name = propertyOf(error);
    const next = errors[i + 1];
    if (name !== undefined) {
      names.push(name);
      if (next && 'schemaPath' in next && next.keyword === error.keyword && next.instancePath === error.instancePath) continue;
    }
    out.push({ path: error.instancePath, message: describe(error, names), keyword: error.keyword });
    names = [];
  }
  return out;
}

/** The property a `required` or `additionalProperties` error names. */
function propertyOf(error: AjvError): unknown {
  const params = error.params ?? {};
  if (error.keyword === 'required') return params.missingProperty;
  if (error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties') return params.additionalProperty ?? params.unevaluatedProperty;
  return undefined;
}

/** `error` in words; `properties`: the names of merged `required` or unknown-property errors. */
function describe(error: AjvError, properties: readonly unknown[]): string {
  const params = error.params ?? {};
  const got = ` (got ${shown(error.data)})`;
  switch (error.keyword) {
    case 'type':
      return `must be ${typeWords(params.type)}${got}`;
    case 'enum':
      return `must be one of: ${listOf(Array.isArray(params.allowedValues) ? params.allowedValues : [], show)}${got}`;
    case 'const':
      return `must be ${show(params.allowedValue)}${got}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${BOUND_WORDS[String(params.comparison)] ?? String(params.comparison)} ${String(params.limit)}${got}`;
    case 'multipleOf':
      return `must be a multiple of ${String(params.multipleOf)}${got}`;
    case 'minLength':
    case 'maxLength':
      return `must have ${error.keyword === 'minLength' ? 'at least' : 'at most'} ${count(params.limit, 'character')} (it has ${typeof error.data === 'string' ? [...error.data].length : '?'})`;
    case 'minItems':
    case 'maxItems':
      return `must have ${error.keyword === 'minItems' ? 'at least' : 'at most'} ${count(params.limit, 'item')} (it has ${Array.isArray(error.data) ? error.data.length : '?'})`;
    case 'minProperties':
    case 'maxProperties':
      return `must have ${error.keyword === 'minProperties' ? 'at least' : 'at most'} ${count(params.limit, 'property', 'properties')} (it has ${isRecord(error.data) ? Object.keys(error.data).length : '?'})`;
    case 'pattern':
      return `must match the pattern /${String(params.pattern)}/${got}`;
    case 'format':
      return `must be a valid ${String(params.format)}${got}`;
    case 'required':
      return `misses required ${properties.length === 1 ? 'property' : 'properties'} ${listOf(properties, show)}`;
    case 'dependentRequired':
      return `misses property ${show(params.missingProperty)}, required when ${show(params.property)} is present`;
    case 'additionalProperties':
    case 'unevaluatedProperties':
      return `has unknown ${properties.length === 1 ? 'property' : 'properties'} ${listOf(properties, show)}; ${accepted(error.parentSchema)}`;
    case 'propertyNames':
      return `has a property name that is not allowed: ${show(params.propertyName)}`;
    case 'uniqueItems':
      return `must not repeat items (items ${String(params.j)} and ${String(params.i)} are equal)`;
    case 'oneOf':
      return `matches more than one of the exclusive alternatives (${listOf(Array.isArray(params.passingSchemas) ? params.passingSchemas : [], String)}); it must match exactly one`;
    case 'not':
      return `is not allowed here${got}`;
    default:
      return error.message ?? error.keyword;
  }
}

const BOUND_WORDS: Record<string, string> = { '>=': 'at least', '<=': 'at most', '>': 'greater than', '<': 'less than' };

/** The properties an object schema names, for a model that sent another one. */
function accepted(schema: unknown): string {
  const names = isRecord(schema) && isRecord(schema.properties) ? Object.keys(schema.properties) : [];
  return names.length === 0 ? 'it takes no properties' : `the properties are ${listOf(names, show)}`;
}

/** What one alternative of a union accepts, in a few words. */
function summarise(branch: unknown, root: unknown, depth: number): string {
  const schema = resolveRef(branch, root);
  if (!isRecord(schema)) return schema === false ? 'nothing' : 'anything';
  if ('const' in schema) return show(schema.const);
  if (Array.isArray(schema.enum)) return `one of ${listOf(schema.enum, show)}`;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const inner = schema[key];
    if (Array.isArray(inner)) return depth >= MAX_SUMMARY_DEPTH ? 'one of several alternatives' : inner.map((item) => summarise(item, root, depth + 1)).join(' or ');
  }
  const type = schema.type ?? (isRecord(schema.properties) ? 'object' : undefined);
  if (type === undefined) return 'anything';
  const words = [typeWords(type)];
  if (type === 'object' && isRecord(schema.properties)) {
    const properties = schema.properties;
    const tags = Object.keys(properties).filter((name) => isRecord(properties[name]) && 'const' in properties[name]);
    const required = Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string' && !tags.includes(name)) : [];
    const parts = [...tags.map((name) => `${show(name)}: ${show((properties[name] as { const: unknown }).const)}`), ...(required.length > 0 ? [`required ${listOf(required, show)}`] : [])];
    if (parts.length > 0) words.push(`with ${parts.join(', ')}`);
  }
  if (typeof schema.pattern === 'string') words.push(`matching /${schema.pattern}/`);
  for (const [key, bound] of [['minimum', 'at least'], ['exclusiveMinimum', 'greater than'], ['maximum', 'at most'], ['exclusiveMaximum', 'less than']] as const) {
    if (typeof schema[key] === 'number') words.push(`${bound} ${schema[key]}`);
  }
  return words.join(' ');
}

/** A local `$ref` (`#/$defs/Circle`) followed once; anything else as it is. */
function resolveRef(schema: unknown, root: unknown): unknown {
  if (!isRecord(schema) || typeof schema.$ref !== 'string' || !schema.$ref.startsWith('#')) return schema;
  let node: unknown = root;
  for (const part of schema.$ref.slice(1).split('/').filter(Boolean)) {
    node = isRecord(node) ? node[decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~')] : undefined;
  }
  return node ?? schema;
}

/** `"string"`, `["string", "null"]` as words: "a string", "a string or null". */
function typeWords(type: unknown): string {
  const types = (Array.isArray(type) ? type : [type]).map(String);
  return types.map((name) => (name === 'null' ? 'null' : `${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name}`)).join(' or ');
}

/** Values, listed until MAX_LISTED of them or MAX_LIST_CHARS, then how many more. */
function listOf(values: readonly unknown[], format: (value: unknown) => string): string {
  const shownValues: string[] = [];
  let length = 0;
  for (const value of values) {
    const text = format(value);
    if (shownValues.length === MAX_LISTED || (shownValues.length > 0 && length + text.length > MAX_LIST_CHARS)) break;
    shownValues.push(text);
    length += text.length + 2;
  }
  const rest = values.length - shownValues.length;
  return shownValues.join(', ') + (rest > 0 ? `, and ${rest} more (see the schema)` : '');
}

function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

/** A refused value, short: scalars as JSON (long strings cut), objects and arrays by kind. */
function shown(value: unknown): string {
  if (typeof value === 'object' && value !== null) return jsonKind(value);
  const text = show(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 4)}..."` : text;
}

function count(n: unknown, word: string, plural = `${word}s`): string {
  return `${String(n)} ${n === 1 ? word : plural}`;
}

