/**
 * The client against real processes: a misbehaving Node tool for every defence (time-out,
 * abort, size bound, stdin closing, orphaned grandchildren), the hand-written Python tool
 * for the protocol itself.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AbortError,
  InvalidOutputError,
  OutputTooLargeError,
  SchemaMismatchError,
  SpawnError,
  TimeoutError,
  ToolCrashError,
  ToolError,
  TwyltClient,
  UnexpectedExitError,
  type ToolSpec,
} from '../../packages/twylt/src/client/index.js';
import { waitGone } from '../support/processes.js';
import { NO_PYTHON_REASON, noPython, pythonTool } from '../support/python.js';

const misbehave = fileURLToPath(new URL('./fixtures/misbehave.mjs', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'twylt-client-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function tool(mode: string, extra: Record<string, string> = {}) {
  return new TwyltClient([process.execPath, misbehave], { env: { MISBEHAVE: mode, ...extra } });
}
let pidFiles = 0;
function pidFile(): string {
  return join(scratch, `pids-${pidFiles++}.json`);
}
function pidsIn(file: string): { tool: number; grandchild: number } {
  return JSON.parse(readFileSync(file, 'utf8'));
}

describe('defences against a misbehaving tool', () => {
  it('kills the whole process group on time-out', async () => {
    const file = pidFile();
    const started = Date.now();
    const error = await tool('hang', { PID_FILE: file }).call({}, { timeoutMs: 1500 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).timeoutMs).toBe(1500);
    expect(Date.now() - started).toBeLessThan(10_000);
    const { tool: toolPid, grandchild } = pidsIn(file);
    expect(await waitGone(toolPid)).toBe(true);
    expect(await waitGone(grandchild)).toBe(true);
  });

  it('cancels on abort and leaves no process behind', async () => {
    const file = pidFile();
    const controller = new AbortController();
    const pending = tool('hang', { PID_FILE: file }).call({}, { signal: controller.signal, timeoutMs: 30_000 });
    // Abort once the tool is really running (it has written its pid file).
    while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort(new Error('user cancelled'));
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect((error as AbortError).cause).toEqual(new Error('user cancelled'));
    const { tool: toolPid, grandchild } = pidsIn(file);
    expect(await waitGone(toolPid)).toBe(true);
    expect(await waitGone(grandchild)).toBe(true);
  });

  it('does not spawn at all when the signal is already aborted', async () => {
    const count = join(scratch, 'count-aborted');
    const error = await tool('echo', { COUNT_FILE: count }).call({}, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect(existsSync(count)).toBe(false);
  });

  it('kills a tool that floods stdout past the bound', async () => {
    const error = await tool('flood').call({}, { maxOutputBytes: 200_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutputTooLargeError);
    expect((error as OutputTooLargeError).stream).toBe('stdout');
    expect((error as OutputTooLargeError).stdout.length).toBe(200_000);
  });

  it('bounds stderr too', async () => {
    const error = await tool('flood_stderr').call({}, { maxOutputBytes: 100_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutputTooLargeError);
    expect((error as OutputTooLargeError).stream).toBe('stderr');
  });

  it('closes stdin, so a tool that reads it to the end still answers', async () => {
    // Were stdin left open, the tool would wait for it until the time-out.
    const cli = await tool('read_stdin').call({ a: 1 }, { timeoutMs: 20_000 });
    expect(cli.output).toEqual({ stdin: '' });
    const stdin = await tool('read_stdin').call({ a: 1 }, { transport: 'stdin', timeoutMs: 20_000 });
    expect(stdin.output).toEqual({ stdin: '{"a":1}' });
  });

  it('ends grandchildren a tool leaves behind when it exits', async () => {
    const file = pidFile();
    const { output } = await tool('leave_child', { PID_FILE: file }).call({});
    expect(output).toEqual({ ok: true });
    expect(await waitGone(pidsIn(file).grandchild)).toBe(true);
  });
});

describe('typed failures', () => {
  it('a protocol failure carries exit code, parsed error object and stage', async () => {
    const error = (await tool('validation_error').call({}).catch((e: unknown) => e)) as ToolError;
    expect(error).toBeInstanceOf(ToolError);
    expect(error.exitCode).toBe(2);
    expect(error.stage).toBe('input');
    expect(error.error?.type).toBe('validation_error');
    expect(error.issues).toEqual([{ path: 'x', code: 'required', message: 'Required field is missing', value: {} }]);
  });

  it('keeps raw stderr when it is not an error object, and infers the stage', async () => {
    const error = (await tool('human_error').call({}).catch((e: unknown) => e)) as ToolError;
    expect(error).toBeInstanceOf(ToolError);
    expect(error.error).toBeUndefined();
    expect(error.stage).toBe('input');
    expect(error.stderr).toContain('1 validation error');
  });

  it('distinguishes an exit code outside the protocol, a crash, non-JSON stdout and a missing program', async () => {
    const unexpected = await tool('exit7').call({}).catch((e: unknown) => e);
    expect(unexpected).toBeInstanceOf(UnexpectedExitError);
    expect((unexpected as UnexpectedExitError).exitCode).toBe(7);
    expect((unexpected as UnexpectedExitError).message).toContain('something odd');

    const crash = await tool('crash').call({}).catch((e: unknown) => e);
    expect(crash).toBeInstanceOf(ToolCrashError);
    expect((crash as ToolCrashError).signal).toBe('SIGTERM');

    const garbage = await tool('garbage').call({}).catch((e: unknown) => e);
    expect(garbage).toBeInstanceOf(InvalidOutputError);
    expect((garbage as InvalidOutputError).stdout).toBe('Hello, this is not JSON\n');

    const missing = await new TwyltClient(['/nonexistent/twylt-tool']).call({}).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(SpawnError);
  });
});

describe('transports and concurrency', () => {
  it('passes the input by CLI argument, stdin and file', async () => {
    const client = tool('echo');
    for (const transport of ['cli', 'stdin', 'file'] as const) {
      const { output, transport: used } = await client.call<{ echo: unknown }>({ word: 'hi', n: [1, 2] }, { transport });
      expect(used).toBe(transport);
      expect(output.echo).toEqual({ word: 'hi', n: [1, 2] });
    }
  });

  it('file mode uses a fresh temporary directory and removes it', async () => {
    const { output } = await tool('echo').call<{ cwd: string }>({ a: 1 }, { transport: 'file' });
    expect(output.cwd).not.toBe(process.cwd());
    expect(existsSync(output.cwd)).toBe(false);
  });

  it('file mode in a named directory leaves input.json and output.json there', async () => {
    const dir = mkdtempSync(join(scratch, 'named-'));
    writeFileSync(join(dir, 'output.json'), 'stale');
    const { output } = await tool('echo').call<{ echo: unknown }>({ a: 2 }, { transport: 'file', fileDir: dir });
    expect(output.echo).toEqual({ a: 2 });
    expect(JSON.parse(readFileSync(join(dir, 'input.json'), 'utf8'))).toEqual({ a: 2 });
    expect(JSON.parse(readFileSync(join(dir, 'output.json'), 'utf8')).echo).toEqual({ a: 2 });
  });

  it('runs concurrent calls independently, file mode in one named directory included', async () => {
    const client = tool('echo');
    const dir = mkdtempSync(join(scratch, 'shared-'));
    const calls = Array.from({ length: 8 }, (_, i) =>
      client.call<{ echo: { i: number } }>({ i }, { transport: (['cli', 'stdin', 'file'] as const)[i % 3], fileDir: i % 3 === 2 ? dir : undefined }),
    );
    const results = await Promise.all(calls);
    expect(results.map((result) => result.output.echo.i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});

describe.skipIf(noPython)(`against the hand-written Python tool (${noPython ? NO_PYTHON_REASON : 'python3 found'})`, () => {
  const client = () => new TwyltClient(pythonTool());

  it('describes every mode, by payload and by INPUT_DESCRIBE', async () => {
    const c = client();
    const spec = await c.spec();
    expect(spec.name).toBe('py_echo');
    expect(spec.format_version).toBe('1.8');
    expect(await c.describe('brief')).toBe(spec.description);
    expect(await c.describe('brief', { via: 'env' })).toBe(spec.description);
    expect(await c.describe('schema', { via: 'env' })).toEqual({ inputSchema: spec.inputSchema, outputSchema: spec.outputSchema });
    expect(await c.describe('requirements')).toEqual(spec.requirements);
    expect(await c.describe('few_shots')).toEqual(spec.few_shots);
  });

  it('calls over every transport', async () => {
    for (const transport of ['cli', 'stdin', 'file'] as const) {
      const { output } = await client().call({ text: 'ab', times: 2 }, { transport });
      expect(output).toEqual({ echo: 'abab', length: 4, scale: 1 });
    }
  });

  it('reports the tool\'s validation error with its issues', async () => {
    const error = (await client().call({ text: 5, extra: true }).catch((e: unknown) => e)) as ToolError;
    expect(error).toBeInstanceOf(ToolError);
    expect(error.exitCode).toBe(2);
    expect(error.issues.map((item) => [item.path, item.code])).toEqual([
      ['text', 'invalid_string'],
      ['extra', 'unknown_field'],
    ]);
  });

  it('validates input against the published schema before spawning', async () => {
    const c = client();
    const spec = await c.spec();
    // A client whose tool would hang if it ever ran: the mismatch must be found first.
    const hanging = new TwyltClient([process.execPath, misbehave], { env: { MISBEHAVE: 'hang', PID_FILE: pidFile() }, spec });
    const error = (await hanging.call({ text: 'x', extra: 1 }, { validate: true, timeoutMs: 20_000 }).catch((e: unknown) => e)) as SchemaMismatchError;
    expect(error).toBeInstanceOf(SchemaMismatchError);
    expect(error.side).toBe('input');
    expect(error.issues[0]).toMatchObject({ keyword: 'additionalProperties' });
  });

  it('validates output against the published schema after the call', async () => {
    const spec = await client().spec();
    const lying = new TwyltClient([process.execPath, misbehave], { env: { MISBEHAVE: 'echo' }, spec });
    const error = (await lying.call({ text: 'x' }, { validate: { output: true } }).catch((e: unknown) => e)) as SchemaMismatchError;
    expect(error).toBeInstanceOf(SchemaMismatchError);
    expect(error.side).toBe('output');
    expect(error.value).toMatchObject({ echo: { text: 'x' } });
    // The same call passes when the output is right.
    const { output } = await client().call({ text: 'x' }, { validate: true });
    expect(output).toEqual({ echo: 'x', length: 1, scale: 1 });
  });
});

describe('spec caching', () => {
  const spec: ToolSpec = {
    format_version: '1.8', name: 'cached', version: '1.0.0', description: '', requirements: { tool: 'npm', format: 'package.json', content: '' },
    inputSchema: { type: 'object', properties: {}, additionalProperties: false }, outputSchema: {}, few_shots: [],
  };

  it('returns a spec the caller cached without spawning', async () => {
    const count = join(scratch, 'count-cached');
    const client = new TwyltClient([process.execPath, misbehave], { env: { COUNT_FILE: count }, spec });
    expect(await client.spec()).toBe(spec);
    expect(existsSync(count)).toBe(false);
  });

  it('fetches once for concurrent callers, and again on refresh', async () => {
    const count = join(scratch, 'count-concurrent');
    const client = new TwyltClient([process.execPath, misbehave], { env: { COUNT_FILE: count } });
    const specs = await Promise.all([client.spec(), client.spec(), client.spec()]);
    expect(specs[0]).toBe(specs[2]);
    expect(await client.spec()).toBe(specs[0]);
    expect(readFileSync(count, 'utf8')).toBe('run\n');
    await client.spec({ refresh: true });
    expect(readFileSync(count, 'utf8')).toBe('run\nrun\n');
  });

  it('does not cache a failed fetch', async () => {
    const client = new TwyltClient([process.execPath, misbehave], { env: { MISBEHAVE: 'exit7' } });
    await expect(client.spec()).rejects.toBeInstanceOf(UnexpectedExitError);
    await expect(client.spec({ env: { MISBEHAVE: 'echo' } })).resolves.toMatchObject({ echo: { describe: 'json_spec' } });
  });
});
