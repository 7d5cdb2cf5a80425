/**
 * The probe's contract: a Zod 4 input and output that exercise what tools really declare
 * (nested objects, arrays of objects, enums, literals, optional fields, defaults,
 * constraints, descriptions, examples and a custom `x-` key). The output mirrors the input.
 */
import { z } from 'zod';

export const Point = z.object({
  x: z.number().min(-1000).max(1000).describe('Horizontal position'),
  y: z.number().min(-1000).max(1000).describe('Vertical position'),
});

export const Tag = z.object({
  label: z.string().min(1).max(20).regex(/^[a-z][a-z0-9-]*$/).describe('Lower-case tag label'),
  weight: z.int().min(0).max(10).default(1).describe('Importance, 0 to 10'),
});

const shape = {
  name: z.string().min(1).max(40).describe('Display name').meta({ examples: ['Ada'] }),
  count: z.int().min(1).max(100).describe('How many'),
  ratio: z.number().gt(0).lt(1).optional().describe('A share strictly between 0 and 1'),
  step: z.int().multipleOf(5).optional().describe('A multiple of 5'),
  mode: z.enum(['fast', 'safe']).default('safe').describe('Processing mode'),
  kind: z.literal('probe').describe('Always "probe"'),
  verbose: z.boolean().default(false).describe('Print more'),
  point: Point.describe('A point on the plane'),
  tags: z.array(Tag).max(5).default([]).describe('Up to five tags'),
  note: z.string().max(200).nullable().optional().describe('Free text, or null'),
  units: z.array(z.enum(['cm', 'in'])).min(1).max(2).optional().describe('Units to report in'),
};

export const ProbeInput = z
  .object(shape)
  .describe('What the probe is asked to do')
  .meta({ 'x-twylt-example': 'probe', examples: [{ name: 'Ada', count: 2, kind: 'probe', point: { x: 1, y: 2 } }] });

export const ProbeOutput = z.object(shape).describe('What the probe was asked, with defaults applied');

export type ProbeInputValue = z.output<typeof ProbeInput>;
