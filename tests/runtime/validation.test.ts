/** docs/TWYLT.md section 4: validation issues, against the probe example (a Zod 4 contract). */
import { describe, expect, it } from 'vitest';
import { errorOf, example, run } from '../support/process.js';

const probe = example('probe');
const valid = { name: 'Ada', count: 2, kind: 'probe', point: { x: 1, y: 2 } };
const call = (input: unknown, ...args: string[]) => run([...probe, JSON.stringify(input), ...args]);
const issuesOf = async (input: unknown) => {
  const r = await call(input);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  const error = errorOf(r);
  expect(error).toMatchObject({ type: 'validation_error', source: 'twylt', stage: 'input', message: 'Input validation failed' });
  expect(Object.keys(error)).toEqual(['type', 'source', 'stage', 'message', 'errors']);
  return error.errors as Array<Record<string, unknown>>;
};

describe('valid input', () => {
  it('runs with defaults applied, output in declaration order', async () => {
    const r = await call(valid);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toEqual({ ...valid, mode: 'safe', verbose: false, tags: [] });
    expect(Object.keys(out)).toEqual(['name', 'count', 'mode', 'kind', 'verbose', 'point', 'tags']);
  });
  it('integral floats count as integers (JSON cannot tell 2.0 from 2)', async () => {
    expect((await run([...probe, '{"name":"Ada","count":2.0,"kind":"probe","point":{"x":1,"y":2}}'])).code).toBe(0);
  });
});

describe('issues', () => {
  it('required: the value is the whole payload (without describe)', async () => {
    const input = { count: 2, kind: 'probe', point: { x: 1, y: 2 }, describe: null };
    const issues = await issuesOf(input);
    expect(issues).toEqual([{ path: 'name', code: 'required', message: 'Required field is missing', value: { count: 2, kind: 'probe', point: { x: 1, y: 2 } } }]);
  });
  it('required inside a nested object: the value is the parent object', async () => {
    const issues = await issuesOf({ ...valid, point: { x: 1 } });
    expect(issues).toEqual([{ path: 'point.y', code: 'required', message: 'Required field is missing', value: { x: 1 } }]);
  });
  it('unknown fields at the top and nested, with their values', async () => {
    const issues = await issuesOf({ ...valid, point: { x: 1, y: 2, z: 3 }, extra: [1] });
    expect(issues).toEqual([
      { path: 'point.z', code: 'unknown_field', message: 'Unknown field', value: 3 },
      { path: 'extra', code: 'unknown_field', message: 'Unknown field', value: [1] },
    ]);
  });
  it('wrong types: the fixed codes and messages, null included', async () => {
    const issues = await issuesOf({ name: 5, count: 'two', kind: 'probe', point: { x: 1, y: 2 }, verbose: 'yes', ratio: null });
    expect(issues).toEqual([
      { path: 'name', code: 'invalid_string', message: 'Expected a string', value: 5 },
      { path: 'count', code: 'invalid_integer', message: 'Expected an integer', value: 'two' },
      { path: 'ratio', code: 'invalid_number', message: 'Expected a number', value: null },
      { path: 'verbose', code: 'invalid_boolean', message: 'Expected a boolean', value: 'yes' },
    ]);
    const nullInt = await issuesOf({ ...valid, count: null });
    expect(nullInt[0]).toMatchObject({ path: 'count', code: 'invalid_integer', value: null });
  });
  it('no lax coercion: "5" is not an integer, "true" not a boolean (ADR 0002)', async () => {
    const issues = await issuesOf({ ...valid, count: '5', verbose: 'true' });
    expect(issues.map((i) => i.code)).toEqual(['invalid_integer', 'invalid_boolean']);
  });
  it('declaration order with nested issues inline, then unknown keys in input order', async () => {
    const issues = await issuesOf({ zz: 1, point: { y: 'high', x: 1, q: 0 }, name: '', aa: 2, count: 0, kind: 'probe' });
    expect(issues.map((i) => `${i.path}:${i.code}`)).toEqual([
      'name:string_too_short',
      'count:greater_than_equal',
      'point.y:invalid_number',
      'point.q:unknown_field',
      'zz:unknown_field',
      'aa:unknown_field',
    ]);
  });
  it('array paths use [i]', async () => {
    const issues = await issuesOf({ ...valid, tags: [{ label: 'ok' }, { label: 'Bad Label', weight: 11 }] });
    expect(issues.map((i) => [i.path, i.code])).toEqual([
      ['tags[1].label', 'string_pattern_mismatch'],
      ['tags[1].weight', 'less_than_equal'],
    ]);
  });
  it('constraint codes', async () => {
    const codeOf = async (patch: Record<string, unknown>) => (await issuesOf({ ...valid, ...patch })).map((i) => i.code);
    expect(await codeOf({ count: 101 })).toEqual(['less_than_equal']);
    expect(await codeOf({ count: 3.5 })).toEqual(['int_from_float']);
    expect(await codeOf({ ratio: 0 })).toEqual(['greater_than']);
    expect(await codeOf({ ratio: 1 })).toEqual(['less_than']);
    expect(await codeOf({ step: 7 })).toEqual(['multiple_of']);
    expect(await codeOf({ name: 'x'.repeat(41) })).toEqual(['string_too_long']);
    expect(await codeOf({ mode: 'slow' })).toEqual(['enum']);
    expect(await codeOf({ kind: 'other' })).toEqual(['literal_error']);
    expect(await codeOf({ tags: 'none' })).toEqual(['list_type']);
    expect(await codeOf({ units: [] })).toEqual(['too_short']);
    expect(await codeOf({ units: ['cm', 'in', 'cm'] })).toEqual(['too_long']);
    expect(await codeOf({ point: [1, 2] })).toEqual(['model_type']);
  });
  it('every issue has path, code, message and value, in that order', async () => {
    const issues = await issuesOf({ ...valid, count: 'x' });
    expect(Object.keys(issues[0]!)).toEqual(['path', 'code', 'message', 'value']);
  });
  it('human format lists every issue and counts them', async () => {
    const r = await call({ count: 2, kind: 'probe', point: { x: 1, y: 2 }, extra: 1 }, '--error-format', 'human');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'Input validation failed\n\n  • name\n    Required field is missing\n\n  • extra\n    Unknown field\n\n2 validation errors\n',
    );
  });
});

describe('published contract', () => {
  it('the probe publishes defaults as optional on input, constraints, examples and x- keys', async () => {
    const spec = JSON.parse((await run(probe, { env: { INPUT_DESCRIBE: 'json_spec' } })).stdout);
    const input = spec.inputSchema;
    expect(input.required).toEqual(['name', 'count', 'kind', 'point']);
    expect(input['x-twylt-example']).toBe('probe');
    expect(input.properties.name).toMatchObject({ minLength: 1, maxLength: 40, description: 'Display name', examples: ['Ada'] });
    expect(input.properties.mode).toMatchObject({ default: 'safe', enum: ['fast', 'safe'] });
    expect(input.properties.tags.items.additionalProperties).toBe(false);
    expect(input.properties.point.additionalProperties).toBe(false);
    expect(Object.keys(input).slice(-2)).toEqual(['$id', 'x-schema-version']);
    expect(spec.outputSchema.required).toEqual(expect.arrayContaining(['mode', 'verbose', 'tags']));
  });
});
