/**
 * Hostile business code (issue 8). The fixture's output contract is open (`z.unknown()`),
 * so every returned value reaches the writer. The decided behaviour of each case is
 * listed in docs/robustness.md; these tests hold the runtime to it.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorOf, run } from '../support/process.js';
import { expectProtocolOutcome, robustFixture, scratchDir } from './support.js';

const tool = robustFixture('hostile');
const act = (action: string, extra: Record<string, unknown> = {}, args: string[] = []) => run([...tool, JSON.stringify({ action, ...extra }), ...args]);

describe('biz throws something that is not an Error', () => {
  for (const [action, exception] of [
    ['throw_undefined', { type: 'undefined', message: '' }],
    ['throw_number', { type: 'number', message: '42' }],
    ['throw_symbol', { type: 'symbol', message: 'Symbol(sym)' }],
    ['throw_bigint', { type: 'bigint', message: '10' }],
    // Every getter throws, the constructor's included: nothing can be read.
    ['throw_getters', { type: 'Unknown', message: '' }],
    // Every proxy trap throws, so even `instanceof` on it throws: the trap's own error is reported.
    ['throw_proxy', { type: 'Error', message: 'proxy trap' }],
    ['throw_error_bad_stack', { type: 'Error', message: 'stackless' }],
  ] as const) {
    it(`${action}: exit 5, one error object`, async () => {
      const r = await act(action);
      expectProtocolOutcome(r);
      expect(r.code).toBe(5);
      expect(errorOf(r).exception).toEqual(exception);
    });
  }
  it('with --debug a traceback is added, even when the stack getter throws', async () => {
    for (const action of ['throw_error_bad_stack', 'throw_getters', 'throw_proxy', 'throw_symbol']) {
      const r = await act(action, {}, ['--debug']);
      expect(r.code).toBe(5);
      expect(typeof errorOf(r).traceback).toBe('string');
    }
  });
  it('human format: one line, no stack trace', async () => {
    const r = await act('throw_getters', {}, ['--error-format', 'human']);
    expect(r.code).toBe(5);
    expect(r.stderr).toBe('Tool execution failed: Unknown\n');
  });
});

describe('biz returns what JSON cannot express', () => {
  const unserializable = (reason: string) => ({ type: 'UnserializableOutput', message: `The result cannot be written as JSON: ${reason}` });
  for (const [action, exception] of [
    ['return_bigint', unserializable('Do not know how to serialize a BigInt')],
    ['return_infinity', unserializable('Infinity at "value" is not a JSON number')],
    ['return_nested_nan', unserializable('NaN at index 1 is not a JSON number')],
    ['return_function', unserializable('a function at "value" is not a JSON value')],
    ['return_symbol', unserializable('a symbol at "value" is not a JSON value')],
    ['return_array_undefined', unserializable('undefined at index 1 is not a JSON value')],
  ] as const) {
    it(`${action}: exit 5, UnserializableOutput, nothing on stdout`, async () => {
      const r = await act(action);
      expectProtocolOutcome(r);
      expect(r.code).toBe(5);
      expect(errorOf(r).exception).toEqual(exception);
    });
  }
  it('return_cycle: exit 5, UnserializableOutput', async () => {
    const r = await act('return_cycle');
    expectProtocolOutcome(r);
    expect(errorOf(r).exception.type).toBe('UnserializableOutput');
    expect(errorOf(r).exception.message).toContain('circular');
  });
  it('return_deep (100 000 levels): exit 5, the writer overflow is contained', async () => {
    const r = await act('return_deep', { size: 100_000 });
    expectProtocolOutcome(r);
    expect(r.code).toBe(5);
  });
  it('return_proxy: the proxy trap that fires during output validation is an execution error', async () => {
    const r = await act('return_proxy');
    expectProtocolOutcome(r);
    expect(errorOf(r).exception).toEqual({ type: 'Error', message: 'proxy trap' });
  });
  it('returning undefined breaks the object contract: exit 3', async () => {
    const r = await act('return_undefined');
    expectProtocolOutcome(r);
    expect(r.code).toBe(3);
    expect(errorOf(r).errors).toEqual([{ path: '<root>', code: 'model_type', message: 'Expected an object' }]);
  });
  it('an undefined property is an absent one: exit 0', async () => {
    const r = await act('return_undefined_value');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('{}\n');
  });
  it('a Date goes out as its ISO string (toJSON), where the contract allows any value', async () => {
    const r = await act('return_date');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ value: '1970-01-01T00:00:00.000Z' });
  });
  it('non-enumerable getters are not part of the value: exit 0', async () => {
    const r = await act('return_getters');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ value: {} });
  });
  it('in file mode, none of these leaves an output.json', async () => {
    for (const action of ['return_infinity', 'return_bigint', 'return_cycle', 'throw_proxy']) {
      const dir = scratchDir();
      writeFileSync(join(dir, 'input.json'), JSON.stringify({ action }));
      writeFileSync(join(dir, 'output.json'), 'stale');
      const r = await run(tool, { cwd: dir });
      expect(r.code).toBe(5);
      expect(readdirSync(dir)).toEqual(['input.json']);
    }
  });
});

describe('biz takes over the process', () => {
  it('printing to stdout (console.log, process.stdout.write) goes to stderr; stdout has the result only', async () => {
    const r = await act('chatter');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ value: 'quiet' });
    expect(r.stderr).toBe('{"not": "the result"}\nraw\n');
  });
  for (const code of [0, 1, 5, 7]) {
    it(`process.exit(${code}) inside biz is an execution error, exit 5, never a silent exit`, async () => {
      const r = await act('exit', { code });
      expectProtocolOutcome(r);
      expect(r.code).toBe(5);
      expect(errorOf(r).exception).toEqual({ type: 'ProcessExit', message: `biz called process.exit(${code}) instead of returning a result` });
    });
  }
  it('process.exit in file mode: exit 5 and no output.json', async () => {
    const dir = scratchDir();
    writeFileSync(join(dir, 'input.json'), '{"action": "exit", "code": 0}');
    writeFileSync(join(dir, 'output.json'), 'stale');
    const r = await run(tool, { cwd: dir });
    expect(r.code).toBe(5);
    expect(readdirSync(dir)).toEqual(['input.json']);
  });
  it('process.exit in human format: one line', async () => {
    const r = await act('exit', { code: 0 }, ['--error-format', 'human']);
    expect(r.code).toBe(5);
    expect(r.stderr).toBe('Tool execution failed: ProcessExit: biz called process.exit(0) instead of returning a result\n');
  });
  it('a process.exitCode set by biz does not override the protocol exit code', async () => {
    const r = await act('exit_code', { code: 9 });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ value: 'exit code set' });
  });
});
