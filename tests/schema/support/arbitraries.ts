/**
 * fast-check arbitraries for the equivalence proof: values valid against a (closed,
 * published) JSON Schema, and mutations of them that are often, not always, invalid.
 * The proof never trusts these to be right: it only asks both validators for a verdict.
 */
import fc from 'fast-check';

type Schema = Record<string, any> | boolean;

/** Runs to do: fixed in CI, `TWYLT_FC_RUNS=5000` for a longer local search. */
export const FC_RUNS = Number(process.env.TWYLT_FC_RUNS ?? 300);
export const FC_SEED = 20261130;

function resolve(root: Record<string, any>, schema: Schema): Schema {
  let s = schema;
  while (typeof s === 'object' && typeof s.$ref === 'string') {
    s = s.$ref === '#' ? root : s.$ref.slice(2).split('/').reduce((node: any, key: string) => node[key], root);
  }
  return s;
}

/** Values the schema accepts (for the subset the probes use). */
export function validValue(root: Record<string, any>, schema: Schema = root, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(root, schema);
  if (s === true) return fc.jsonValue({ maxDepth: 1 });
  if (s === false) throw new Error('no value matches false');
  if ('const' in s) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((m: Schema) => validValue(root, m, depth + 1)));
  // `{}` (Any, or z.json()): any JSON value.
  if (s.type === undefined && !s.properties && !s.allOf && !s.not) return fc.jsonValue({ maxDepth: 2 });
  const types: string[] = Array.isArray(s.type) ? s.type : [s.type ?? 'object'];
  return fc.oneof(...types.map((type) => validOfType(root, s as Record<string, any>, type, depth)));
}

function validOfType(root: Record<string, any>, s: Record<string, any>, type: string, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer': {
      const min = Math.max(s.minimum ?? -1e6, s.exclusiveMinimum !== undefined ? Math.floor(s.exclusiveMinimum) + 1 : -1e6);
      const max = Math.min(s.maximum ?? 1e6, s.exclusiveMaximum !== undefined ? Math.ceil(s.exclusiveMaximum) - 1 : 1e6);
      const step = s.multipleOf ?? 1;
      return fc.integer({ min: Math.ceil(min / step), max: Math.floor(max / step) }).map((n) => n * step);
    }
    case 'number': {
      const min = s.minimum ?? s.exclusiveMinimum ?? -1e6;
      const max = s.maximum ?? s.exclusiveMaximum ?? 1e6;
      return fc
        .double({ min, max, noNaN: true, noDefaultInfinity: true })
        .filter((n) => (s.exclusiveMinimum === undefined || n > s.exclusiveMinimum) && (s.exclusiveMaximum === undefined || n < s.exclusiveMaximum))
        .map((n) => (Object.is(n, -0) ? 0 : n));
    }
    case 'string': {
      const min = s.minLength ?? 0;
      const max = s.maxLength ?? 30;
      const base = s.pattern ? fc.stringMatching(new RegExp(s.pattern, 'u')) : fc.string({ minLength: min, maxLength: max, unit: 'grapheme-ascii' });
      return base.filter((text) => [...text].length >= min && [...text].length <= max);
    }
    case 'array': {
      if (depth > 6 && s.prefixItems) return fc.constant(undefined).filter(() => false);
      if (s.prefixItems) return fc.tuple(...s.prefixItems.map((m: Schema) => validValue(root, m, depth + 1)));
      const item = s.items === undefined || s.items === true ? fc.jsonValue({ maxDepth: 1 }) : validValue(root, s.items, depth + 1);
      if (depth > 6 && !s.minItems) return fc.constant([]);
      const arr = fc.array(item, { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 4, 4) });
      return s.uniqueItems ? arr.filter((a) => new Set(a.map((x) => JSON.stringify(x))).size === a.length) : arr;
    }
    default: {
      const properties: Record<string, Schema> = s.properties ?? {};
      const required: string[] = s.required ?? [];
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, sub] of Object.entries(properties)) {
        // Deep down, only required fields: keeps recursive schemas finite.
        if (depth <= 6 || required.includes(key)) record[key] = validValue(root, sub, depth + 1);
      }
      const fixed = fc.record(record, { requiredKeys: required.filter((k) => k in record) as never[] });
      // A map's entries follow its value schema; a free-form object (`true`) takes any JSON.
      const values = typeof s.additionalProperties === 'object' ? validValue(root, s.additionalProperties, depth + 1) : s.additionalProperties === true ? fc.jsonValue({ maxDepth: 1 }) : undefined;
      const extra = values ? fc.dictionary(fc.string({ maxLength: 5 }).filter((k) => !(k in properties)), values, { maxKeys: 2 }) : fc.constant({});
      return fc.tuple(fixed, extra).map(([a, b]) => ({ ...b, ...a }));
    }
  }
}

const INTERESTING_NUMBERS = [-1001, -1000, -1, 0, 0.5, 1, 3.5, 5, 7, 10, 11, 20, 40, 41, 100, 101, 1000, 1001, 9007199254740992, 2 ** 60, -(2 ** 60)];
const INTERESTING_STRINGS = ['', 'a', 'A!', 'fast', 'safe', 'probe', 'cm', 'in', 'x'.repeat(21), 'x'.repeat(41), '😀'.repeat(20), '😀'.repeat(21), 'tag-1'];

/** A JSON value of any kind, small. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.constantFrom(...INTERESTING_NUMBERS),
  fc.constantFrom(...INTERESTING_STRINGS),
  fc.constant([]),
  fc.constant({}),
  fc.jsonValue({ maxDepth: 2 }),
);

type Path = Array<string | number>;

function locations(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  out.push(path);
  if (Array.isArray(value)) value.forEach((v, i) => locations(v, [...path, i], out));
  else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) locations(v, [...path, k], out);
  return out;
}

function update(value: unknown, path: Path, change: (node: unknown) => unknown): unknown {
  if (path.length === 0) return change(value);
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? update(v, rest, change) : v));
  const object = value as Record<string, unknown>;
  return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, k === head ? update(v, rest, change) : v]));
}

export interface Mutation {
  kind: 'unknown_key' | 'replace' | 'delete_key' | 'interesting' | 'grow' | 'shrink';
  at: number;
  pick: number;
  replacement: unknown;
}

export const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('unknown_key', 'replace', 'delete_key', 'interesting', 'grow', 'shrink'),
  at: fc.nat(),
  pick: fc.nat(),
  replacement: anyJson,
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Which nodes a mutation kind can act on. */
const TARGETS: Record<Mutation['kind'], (node: unknown) => boolean> = {
  unknown_key: isObject,
  delete_key: (node) => isObject(node) && Object.keys(node).length > 0,
  interesting: (node) => typeof node === 'number' || typeof node === 'string',
  grow: (node) => Array.isArray(node) || typeof node === 'string',
  shrink: (node) => Array.isArray(node) || typeof node === 'string' || typeof node === 'number',
  replace: () => true,
};

/** Applies one mutation to a node it fits, somewhere in a copy of `value` (deterministic in the mutation). */
export function mutate(value: unknown, m: Mutation): unknown {
  const fits = locations(value).filter((path) => TARGETS[m.kind](valueAt(value, path)));
  if (fits.length === 0) return m.replacement;
  return update(value, fits[m.at % fits.length], (node) => {
    switch (m.kind) {
      case 'unknown_key':
        return { ...(node as object), zz_unknown: m.replacement };
      case 'delete_key': {
        const keys = Object.keys(node as object);
        const drop = keys[m.pick % keys.length];
        return Object.fromEntries(Object.entries(node as object).filter(([k]) => k !== drop));
      }
      case 'interesting':
        return typeof node === 'number' ? INTERESTING_NUMBERS[m.pick % INTERESTING_NUMBERS.length] : INTERESTING_STRINGS[m.pick % INTERESTING_STRINGS.length];
      case 'grow':
        return Array.isArray(node) ? [...node, ...(node.length ? node : [m.replacement]), ...node] : `${node}${node}xxxxxxxxxxxxxxxxxxxxxxxxx`;
      case 'shrink':
        if (typeof node === 'number') return node - 0.5;
        return (node as string | unknown[]).slice(1);
      case 'replace':
        return m.replacement;
    }
  });
}

function valueAt(value: unknown, path: Path): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], value);
}
