/** docs/TWYLT.md sections 1 (step 5) and 3: business code, its failures, and output validation. */
import { mkdtempSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorOf, fixture, ROOT, run } from '../support/process.js';

const tool = fixture('behaviours');
const act = (action: string, extra: Record<string, unknown> = {}) => run([...tool, JSON.stringify({ action, ...extra })]);

describe('business failures become execution errors, exit 5', () => {
  for (const [action, exceptionType] of [
    ['throw_error', 'RangeError'],
    ['throw_string', 'string'],
    ['throw_null', 'null'],
    ['throw_hostile', 'Object'],
    ['reject', 'TypeError'],
    ['unhandled_rejection', 'Error'],
    ['uncaught_in_timer', 'Error'],
    ['never_settles', 'UnsettledPromise'],
  ] as const) {
    it(action, async () => {
      const r = await act(action);
      expect(r.code).toBe(5);
      expect(r.stdout).toBe('');
      const error = errorOf(r);
      expect(error).toMatchObject({ type: 'execution_error', source: 'tool', stage: 'biz', message: 'Tool execution failed' });
      expect(Object.keys(error)).toEqual(['type', 'source', 'stage', 'message', 'exception']);
      expect(error.exception.type).toBe(exceptionType);
      expect(error.exception.message).toBeTypeOf('string');
    });
  }
  it('the exception message is the thrown one', async () => {
    expect(errorOf(await act('throw_error')).exception).toEqual({ type: 'RangeError', message: 'boom' });
    expect(errorOf(await act('throw_string')).exception).toEqual({ type: 'string', message: 'a plain string' });
  });
  it('human format: one readable line, no stack trace, still exit 5', async () => {
    const r = await run([...tool, '{"action": "throw_error"}', '--error-format', 'human']);
    expect(r.code).toBe(5);
    expect(r.stderr).toBe('Tool execution failed: RangeError: boom\n');
  });
  it('--debug adds the stack of the thrown error', async () => {
    const error = errorOf(await run([...tool, '{"action": "throw_error"}', '--debug']));
    expect(error.traceback).toContain('RangeError: boom');
  });
});

describe('output validation, exit 3', () => {
  it('an output that breaks the contract is an output validation error', async () => {
    const r = await act('bad_output');
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    const error = errorOf(r);
    expect(error).toMatchObject({ type: 'validation_error', source: 'twylt', stage: 'output', message: 'Output validation failed' });
    expect(error.errors).toEqual([{ path: 'ok', code: 'invalid_boolean', message: 'Expected a boolean', value: 'yes' }]);
  });
  for (const action of ['bigint', 'cycle', 'nan']) {
    it(`a result JSON cannot carry (${action}) is a normalized error, never invalid JSON`, async () => {
      const r = await act(action);
      expect([3, 5]).toContain(r.code);
      expect(r.stdout).toBe('');
      expect(errorOf(r).type).toMatch(/validation_error|execution_error/);
    });
  }
  it('a failure in file mode leaves no output.json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'twylt-exec-'));
    writeFileSync(join(dir, 'input.json'), '{"action": "bad_output"}');
    writeFileSync(join(dir, 'output.json'), 'stale');
    const r = await run(tool, { cwd: dir });
    expect(r.code).toBe(3);
    expect(existsSync(join(dir, 'output.json'))).toBe(false);
    expect(readdirSync(dir)).toEqual(['input.json']);
  });
});

describe('stdout carries the result and nothing else', () => {
  it('console.log and console.info inside biz go to stderr', async () => {
    const r = await act('console_log');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ok: true });
    expect(r.stderr).toContain('chatter from console.log');
    expect(r.stderr).toContain('chatter from console.info');
  });
  it('process.stdout.write inside biz goes to stderr', async () => {
    const r = await act('stdout_write');
    expect(JSON.parse(r.stdout)).toEqual({ ok: true });
    expect(r.stderr).toContain('raw chatter');
  });
  it('a large result (30 MB) reaches a piped stdout whole', async () => {
    const size = 30 * 1024 * 1024;
    const r = await act('big', { size });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.data.length).toBe(size);
  });
});

describe('defaults are applied before biz', () => {
  it('Zod: biz sees every omitted field with its default, nested ones included', async () => {
    const r = await act('defaults');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(JSON.parse(r.stdout).data)).toEqual({ action: 'defaults', size: 0, label: 'unlabelled', options: { retries: 3 } });
  });
  it('JSON Schema: biz computes with the defaults (times 1, suffix "", scale 1), nested ones included', async () => {
    // Without the defaults the echo would be "" (times missing) or end in "undefined", and scale would be missing.
    const r = await run([...fixture('py_echo_twin'), '{"text": "ab", "decor": {"prefix": "<"}}']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ echo: '<ab', length: 3, scale: 1 });
  });
});

describe('a schema twylt refuses is an error in the tool\'s definition', () => {
  // Not a runtime fixture: `twylt build` refuses such a tool, so it has no built twin.
  const refused = [process.execPath, `${ROOT}build/tests/fixtures/robustness/refused_schema.js`];
  const expectRefused = (r: Awaited<ReturnType<typeof run>>, side: 'input' | 'output') => {
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout).toBe('');
    const error = errorOf(r);
    expect(error).toMatchObject({ type: 'protocol_error', source: 'twylt', stage: 'describe' });
    expect(error.exception.type).toBe('SchemaError');
    expect(error.exception.message).toMatch(new RegExp(`^Tool 'refused': its ${side} schema is refused \\(an error in the tool's definition, not in the request\\): `));
    expect(error.exception.message).toContain('inner.code: a refinement (.refine, .superRefine, .check) cannot be published as JSON Schema');
  };
  for (const side of ['input', 'output'] as const) {
    const env = { REFUSED_SIDE: side };
    it(`in the ${side} schema: describe and call report it alike (exit 4, naming the tool, the side and the construct); biz never runs`, async () => {
      expectRefused(await run(refused, { env: { ...env, INPUT_DESCRIBE: 'json_spec' } }), side);
      const call = await run([...refused, '{"inner": {"code": "abc"}}'], { env });
      expectRefused(call, side);
      expect(call.stderr).not.toContain('biz ran');
    });
  }
});
