/**
 * The probe contract (examples/probe/schemas.ts) written three more ways: as a plain JSON
 * Schema (with $defs/$ref and a type array), with ArkType and with Valibot.
 */
import { type } from 'arktype';
import * as v from 'valibot';
import { toStandardJsonSchema } from '@valibot/to-json-schema';

export const probeJsonSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  description: 'What the probe is asked to do',
  $defs: {
    coordinate: { type: 'number', minimum: -1000, maximum: 1000 },
    point: {
      type: 'object',
      properties: { x: { $ref: '#/$defs/coordinate' }, y: { $ref: '#/$defs/coordinate' } },
      required: ['x', 'y'],
    },
    tag: {
      type: 'object',
      properties: {
        label: { type: 'string', minLength: 1, maxLength: 20, pattern: '^[a-z][a-z0-9-]*$' },
        weight: { type: 'integer', minimum: 0, maximum: 10, default: 1 },
      },
      required: ['label'],
    },
  },
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 40, description: 'Display name', examples: ['Ada'] },
    count: { type: 'integer', minimum: 1, maximum: 100 },
    ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
    step: { type: 'integer', multipleOf: 5 },
    mode: { enum: ['fast', 'safe'], default: 'safe' },
    kind: { const: 'probe' },
    verbose: { type: 'boolean', default: false },
    point: { $ref: '#/$defs/point', description: 'A point on the plane' },
    tags: { type: 'array', items: { $ref: '#/$defs/tag' }, maxItems: 5, default: [] },
    note: { type: ['string', 'null'], maxLength: 200 },
    units: { type: 'array', items: { enum: ['cm', 'in'] }, minItems: 1, maxItems: 2 },
  },
  required: ['name', 'count', 'kind', 'point'],
  'x-twylt-example': 'probe',
};

const ArkTag = type({
  label: type('1 <= string <= 20').and(/^[a-z][a-z0-9-]*$/),
  weight: type('0 <= number.integer <= 10').default(1),
});

export const probeArkType = type({
  name: '1 <= string <= 40',
  count: '1 <= number.integer <= 100',
  'ratio?': '0 < number < 1',
  'step?': 'number.integer % 5',
  mode: type("'fast' | 'safe'").default('safe'),
  kind: "'probe'",
  verbose: type('boolean').default(false),
  point: { x: '-1000 <= number <= 1000', y: '-1000 <= number <= 1000' },
  tags: ArkTag.array().atMostLength(5).default(() => []),
  'note?': 'string <= 200 | null',
  'units?': type("'cm' | 'in'").array().atLeastLength(1).atMostLength(2),
});

const coordinate = v.pipe(v.number(), v.minValue(-1000), v.maxValue(1000));
const ValibotTag = v.object({
  label: v.pipe(v.string(), v.minLength(1), v.maxLength(20), v.regex(/^[a-z][a-z0-9-]*$/)),
  weight: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10)), 1),
});

export const probeValibot = toStandardJsonSchema(
  v.object({
    name: v.pipe(v.string(), v.minLength(1), v.maxLength(40)),
    count: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)),
    ratio: v.optional(v.pipe(v.number(), v.gtValue(0), v.ltValue(1))),
    step: v.optional(v.pipe(v.number(), v.integer(), v.multipleOf(5))),
    mode: v.optional(v.picklist(['fast', 'safe']), 'safe'),
    kind: v.literal('probe'),
    verbose: v.optional(v.boolean(), false),
    point: v.object({ x: coordinate, y: coordinate }),
    tags: v.optional(v.pipe(v.array(ValibotTag), v.maxLength(5)), []),
    note: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(200)))),
    units: v.optional(v.pipe(v.array(v.picklist(['cm', 'in'])), v.minLength(1), v.maxLength(2))),
  }),
);

/** Shapes beyond the probe: unions (tagged and not), records, tuples, recursion, nullable objects. */
import { z } from 'zod';

const Leaf = z.object({ value: z.int().min(0).max(9) });
type TreeNode = { name: string; children?: TreeNode[] };
const Tree: z.ZodType<TreeNode> = z.object({
  name: z.string().max(3),
  get children() {
    return z.array(Tree).max(2).optional();
  },
});

export const ZodVariety = z.object({
  shape: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('circle'), radius: z.number().positive() }),
    z.object({ kind: z.literal('square'), side: z.number().min(1), label: z.string().optional() }),
  ]),
  id: z.union([z.int().min(0), z.string().regex(/^id-[0-9]+$/)]),
  level: z.union([z.literal('low'), z.literal('high')]).default('low'),
  scores: z.record(z.string().max(5), z.int().max(100)).optional(),
  pair: z.tuple([z.string(), z.boolean()]).optional(),
  leaf: Leaf.nullable(),
  tree: Tree.optional(),
  loose: z.looseObject({ a: z.string().optional() }).optional(),
  // Maps and free-form values (issue 12): declared shapes, not closed models.
  headers: z.record(z.string(), z.string()).optional(),
  meta: z.looseObject({}).nullable().optional(),
  anything: z.json().optional(),
  list: z.array(z.unknown()).max(3).optional(),
  count: z.int().optional(),
});
