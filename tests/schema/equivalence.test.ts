/**
 * The property-based proof that what a tool publishes is what it enforces: for the probe
 * contract in each schema kind, generated valid values and mutations of them get the same
 * verdict from the runtime adapter and from Ajv on the published schema.
 *
 * Input side: accept(runtime) == accept(Ajv, published input schema), and an accepted
 * value, defaults applied, still satisfies the published schema.
 * Output side: biz's return may omit fields with defaults (the runtime fills them), so the
 * published output schema describes what is emitted: whatever Ajv accepts the runtime
 * accepts, and whatever the runtime emits Ajv accepts.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ProbeInput, ProbeOutput } from '../../examples/probe/schemas.js';
import { adaptSchema, publishSchema } from '../../packages/twylt/src/schema/index.js';
import type { SchemaAdapter } from '../../packages/twylt/src/schema/adapter.js';
import { FC_RUNS, FC_SEED, mutate, mutation, validValue } from './support/arbitraries.js';
import { probeArkType, probeJsonSchema, probeValibot, ZodVariety } from './support/probes.js';

/** A fresh Ajv per case: the published `$id`s repeat across cases. */
const newAjv = () => new Ajv2020({ strict: false, validateFormats: false });

interface Case {
  name: string;
  input: unknown;
  output: unknown;
  /**
   * Values on which the library is known to be stricter than the JSON Schema it publishes:
   * there only "runtime accepts => Ajv accepts" is asserted (see docs/schemas.md).
   */
  libraryStricter?: (value: unknown) => boolean;
}

/** ArkType and Valibot count string lengths in UTF-16 units; JSON Schema counts code points. */
const hasAstral = (value: unknown): boolean => /[\u{10000}-\u{10FFFF}]/u.test(JSON.stringify(value));
/**
 * Beyond 2^53 ArkType and Valibot take the exact remainder for `multipleOf` (2^60 % 5 is 1),
 * where JSON Schema validators divide and the quotient rounds to an integer.
 */
const hasUnsafeNumber = (value: unknown): boolean => JSON.stringify(value, (_key, v) => (typeof v === 'number' && Math.abs(v) > Number.MAX_SAFE_INTEGER ? '!unsafe!' : v)).includes('!unsafe!');
const libraryStricter = (value: unknown): boolean => hasAstral(value) || hasUnsafeNumber(value);

/** The variety's published schema, handed back as a plain JSON Schema (oneOf, $ref recursion, propertyNames, prefixItems). */
const varietyAsJson = structuredClone((await adaptSchema(ZodVariety, 'input')).jsonSchema());

const cases: Case[] = [
  { name: 'Zod 4 (examples/probe)', input: ProbeInput, output: ProbeOutput },
  { name: 'Zod 4 unions, records, tuples, recursion', input: ZodVariety, output: ZodVariety },
  { name: 'plain JSON Schema', input: probeJsonSchema, output: probeJsonSchema },
  { name: 'plain JSON Schema (the variety, as published)', input: varietyAsJson, output: varietyAsJson },
  { name: 'ArkType', input: probeArkType, output: probeArkType, libraryStricter },
  { name: 'Valibot (toStandardJsonSchema)', input: probeValibot, output: probeValibot, libraryStricter },
];

/** The runtime's verdict on a copy, so that a default filled in cannot leak into Ajv's input. */
async function verdict(adapter: SchemaAdapter, value: unknown) {
  return adapter.validate(structuredClone(value));
}

/** Every object schema in a published contract is closed (a map keeps its value schema). */
function openObjects(node: unknown, at = '#', out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n, i) => openObjects(n, `${at}/${i}`, out));
  else if (typeof node === 'object' && node !== null) {
    const s = node as Record<string, unknown>;
    if ((s.type === 'object' || s.properties) && s.additionalProperties === undefined) out.push(at);
    for (const [key, sub] of Object.entries(s)) if (key !== 'default' && key !== 'examples' && key !== 'const' && key !== 'enum') openObjects(sub, `${at}/${key}`, out);
  }
  return out;
}

describe.each(cases)('published schema == runtime: $name', ({ input, output, libraryStricter }) => {
  it('publishes closed objects at every depth, on both sides', async () => {
    for (const [schema, io] of [[input, 'input'], [output, 'output']] as const) {
      const published = publishSchema(await adaptSchema(schema, io), {});
      expect(openObjects(published)).toEqual([]);
      expect(JSON.stringify(published)).toContain('"additionalProperties":false');
    }
  });

  it('input side agrees with Ajv on generated valid and mutated values', async () => {
    const adapter = await adaptSchema(input, 'input');
    const published = publishSchema(adapter, { name: 'ProbeInput', version: '1.0.0' });
    const check = newAjv().compile(published);
    let accepted = 0;
    let rejected = 0;
    const valid = validValue(published);
    await fc.assert(
      fc.asyncProperty(valid, fc.option(mutation, { freq: 3 }), async (base, m) => {
        const value = m === null ? base : mutate(base, m);
        const ajvOk = check(value);
        const result = await verdict(adapter, value);
        if (m === null) expect(ajvOk, `generator produced an invalid value: ${JSON.stringify(value)}`).toBe(true);
        if (libraryStricter?.(value)) {
          if (result.ok) expect(ajvOk).toBe(true);
          return;
        }
        expect(result.ok, `runtime ${result.ok ? 'accepted' : 'rejected'} what Ajv ${ajvOk ? 'accepts' : 'rejects'}: ${JSON.stringify(value)}\n${JSON.stringify(result.ok ? null : result.issues)}`).toBe(ajvOk);
        if (result.ok) {
          accepted++;
          expect(check(result.value), `defaults broke the contract: ${JSON.stringify(result.value)}`).toBe(true);
        } else {
          rejected++;
          expect(result.issues.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: FC_RUNS, seed: FC_SEED },
    );
    // Both directions were really exercised.
    expect(accepted).toBeGreaterThan(FC_RUNS / 10);
    expect(rejected).toBeGreaterThan(FC_RUNS / 10);
  });

  it('output side: what Ajv accepts is accepted, and what is emitted satisfies the published schema', async () => {
    const adapter = await adaptSchema(output, 'output');
    const published = publishSchema(adapter, {});
    const ajv = newAjv();
    const check = ajv.compile(published);
    const acceptsAsInput = ajv.compile(publishSchema(await adaptSchema(output, 'input'), {}));
    await fc.assert(
      fc.asyncProperty(validValue(publishSchema(await adaptSchema(output, 'input'), {})), fc.option(mutation, { freq: 3 }), async (base, m) => {
        const value = m === null ? base : mutate(base, m);
        const result = await verdict(adapter, value);
        if (result.ok) expect(check(result.value), `emitted value breaks the published schema: ${JSON.stringify(result.value)}`).toBe(true);
        if (libraryStricter?.(value)) return;
        if (check(value)) expect(result.ok, `runtime rejected a valid output: ${JSON.stringify(value)}`).toBe(true);
        expect(result.ok).toBe(acceptsAsInput(value));
        if (result.ok) expect(check(result.value), `emitted value breaks the published schema: ${JSON.stringify(result.value)}`).toBe(true);
      }),
      { numRuns: FC_RUNS, seed: FC_SEED },
    );
  });
});
