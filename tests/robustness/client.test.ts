/**
 * The client against tools that break the protocol (issue 8): every way is a typed client
 * error, and neither the tool nor anything it started outlives the call.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  AbortError,
  InvalidOutputError,
  OutputTooLargeError,
  TimeoutError,
  ToolCrashError,
  ToolError,
  TwyltClient,
  type TwyltClientError,
  UnexpectedExitError,
} from '../../packages/twylt/src/client/index.js';
import { describeFailure } from '../../packages/twylt/src/toolset/index.js';
import { waitGone } from '../support/processes.js';

const rogue = fileURLToPath(new URL('../fixtures/robustness/rogue.mjs', import.meta.url));
const client = (behaviour: string) => new TwyltClient([process.execPath, rogue, behaviour], { timeoutMs: 20_000 });

/** Every pid the rogue reported (its own, and a grandchild's if it made one). */
function pidsOf(stderr: string): number[] {
  return [...stderr.matchAll(/^(?:pid|grandchild) (\d+)$/gm)].map((m) => Number(m[1]));
}

/** Calls, expects the typed failure, then checks that every process it reported is gone. */
async function expectFailure<E extends TwyltClientError>(call: Promise<unknown>, type: new (...args: any[]) => E, pids = 1): Promise<E> {
  const error = await call.then(
    () => expect.unreachable('the call should have failed'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  const found = pidsOf((error as E).stderr);
  expect(found.length).toBe(pids);
  for (const pid of found) expect(await waitGone(pid), `pid ${pid} outlived the call`).toBe(true);
  return error as E;
}

describe('a tool that breaks the protocol is a typed client error', () => {
  it('hangs: TimeoutError, the tool and its grandchild are killed', async () => {
    const error = await expectFailure(client('hang').call({}, { timeoutMs: 1500 }), TimeoutError, 2);
    expect(error.timeoutMs).toBe(1500);
  });
  it('is aborted by the caller: AbortError, nothing left running', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('enough')), 1000);
    await expectFailure(client('hang').call({}, { signal: controller.signal }), AbortError, 2);
  });
  it('floods stdout past the bound: OutputTooLargeError (stdout), killed', async () => {
    const error = await expectFailure(client('flood_stdout').call({}, { maxOutputBytes: 1 << 20 }), OutputTooLargeError, 2);
    expect([error.stream, error.limit]).toEqual(['stdout', 1 << 20]);
    expect(error.stdout.length).toBeLessThanOrEqual(1 << 20);
  });
  it('floods stderr past the bound: OutputTooLargeError (stderr), killed', async () => {
    const error = await expectFailure(client('flood_stderr').call({}, { maxOutputBytes: 1 << 20 }), OutputTooLargeError, 2);
    expect(error.stream).toBe('stderr');
    expect(error.stderr.length).toBeLessThanOrEqual(1 << 20);
  });
  it('exits by a signal: ToolCrashError with the signal, its grandchild is ended too', async () => {
    const error = await expectFailure(client('signal').call({}), ToolCrashError, 2);
    expect(error.signal).toBe('SIGKILL');
    expect((await expectFailure(client('segv').call({}), ToolCrashError)).signal).toBe('SIGSEGV');
  });
  it('prints two JSON documents: InvalidOutputError', async () => {
    const error = await expectFailure(client('two_documents').call({}), InvalidOutputError);
    expect(error.source).toBe('stdout');
    expect(error.stdout).toBe('{"a": 1}\n{"b": 2}\n');
  });
  it('prints a non-JSON token (NaN): InvalidOutputError', async () => {
    await expectFailure(client('not_json').call({}), InvalidOutputError);
  });
  it('exits 0 with no output: InvalidOutputError on stdout, and on output.json in file mode', async () => {
    expect((await expectFailure(client('no_output').call({}), InvalidOutputError)).message).toContain('it is empty');
    expect((await expectFailure(client('no_output').call({}, { transport: 'file' }), InvalidOutputError)).source).toBe('output.json');
    await expectFailure(client('no_output').describe('json_spec'), InvalidOutputError);
  });
  it('prints bytes that are not UTF-8: InvalidOutputError on stdout, on output.json, and for a describe', async () => {
    const notUtf8 = 'it is not valid UTF-8';
    const stdout = await expectFailure(client('invalid_utf8').call({}), InvalidOutputError);
    expect([stdout.source, stdout.message]).toEqual(['stdout', `tool succeeded but its stdout is not JSON: ${notUtf8}`]);
    const file = await expectFailure(new TwyltClient([process.execPath, rogue, 'invalid_utf8', 'file']).call({}, { transport: 'file' }), InvalidOutputError);
    expect([file.source, file.message]).toEqual(['output.json', `tool succeeded but its output.json is not JSON: ${notUtf8}`]);
    expect((await expectFailure(client('invalid_utf8').describe('brief'), InvalidOutputError)).message).toContain(notUtf8);
  });
  it('exits with a code outside the protocol (a native crash): UnexpectedExitError', async () => {
    expect((await expectFailure(client('exit_1').call({}), UnexpectedExitError)).exitCode).toBe(1);
  });
  it('a protocol failure: ToolError with the parsed error object', async () => {
    const error = await expectFailure(client('error_then_garbage').call({}), ToolError);
    expect([error.exitCode, error.stage, error.error?.type]).toEqual([2, 'input', 'validation_error']);
  });
  it('succeeds but leaves a grandchild holding stdout: the result arrives, the grandchild is ended', async () => {
    const result = await client('exit_with_grandchild').call({});
    expect(result.output).toEqual({ ok: true });
    const pids = pidsOf(result.stderr);
    expect(pids.length).toBe(2);
    for (const pid of pids) expect(await waitGone(pid), `pid ${pid} outlived the call`).toBe(true);
  });
});

describe('a long stderr, described for a model (toolset/failure.ts)', () => {
  it('quotes the telling line and the end of stderr, at most STDERR_EXCERPT_CHARS of it', async () => {
    const error = await expectFailure(client('long_stderr').call({}), UnexpectedExitError);
    const { kind, message } = describeFailure('rogue', error);
    expect(kind).toBe('broken');
    const [head, excerpt] = message.split('\nIts stderr ends:\n...');
    expect(head).toBe('"rogue" broke the TWYLT protocol: tool exited with 1, which is not a TWYLT exit code (0, 2, 3, 4, 5, 6): Error: why it began');
    expect(excerpt!.length).toBe(1000);
    expect(error.stderr.trim().endsWith(excerpt!)).toBe(true);
    expect(excerpt!.endsWith('last line: how it ended')).toBe(true);
  });
});
