/**
 * End to end: the real `twylt-mcp` command over stdio, driven by the MCP SDK's own client,
 * serving a TypeScript example, the foreign Python tool and a hand-written JS fixture.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { example, run } from '../support/process.js';
import { HAS_PYTHON, PY_ECHO, SLEEPER, isRunning, sleeperPid, startBridge, textOf, waitFor, type Bridge } from '../support/mcp.js';

// Also bounds the describe at start-up: generous enough for a slow, busy CI machine.
const QUICK_TIMEOUT_MS = 3000;
const SMALL_OUTPUT_BYTES = 4000;
const ECHO = example('echo');

let bridge: Bridge;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'twylt-mcp-test-'));
  const config = join(dir, 'tools.json');
  writeFileSync(
    config,
    JSON.stringify({
      tools: [
        { command: SLEEPER, env: { SLEEPER_TAG: 'from-config' } },
        { command: SLEEPER, name: 'sleeper_quick', timeoutMs: QUICK_TIMEOUT_MS },
        // Room for its json_spec at start-up, not for a big echo.
        { command: ECHO, name: 'echo_small', maxOutputBytes: SMALL_OUTPUT_BYTES },
      ],
    }),
  );
  const commands = [ECHO, ...(HAS_PYTHON ? [PY_ECHO] : [])];
  bridge = await startBridge(['--config', config, ...commands.flatMap((command) => ['--', ...command])]);
});

afterAll(async () => {
  await bridge?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What a tool publishes, read straight from the tool. */
async function publishedSpec(command: readonly string[]): Promise<Record<string, any>> {
  const result = await run([...command, '{"describe": "json_spec"}']);
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout);
}

function call(name: string, args: Record<string, unknown>, options: { signal?: AbortSignal } = {}) {
  return bridge.client.callTool({ name, arguments: args }, undefined, options);
}

describe('tools/list', () => {
  it('lists every tool with its published name, description and schemas, unchanged', async () => {
    const { tools } = await bridge.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['echo', 'echo_small', ...(HAS_PYTHON ? ['py_echo'] : []), 'sleeper', 'sleeper_quick'].sort());
    const served: Array<[string, readonly string[]]> = [['echo', ECHO], ['sleeper', SLEEPER], ...(HAS_PYTHON ? [['py_echo', PY_ECHO] as [string, string[]]] : [])];
    for (const [name, command] of served) {
      const spec = await publishedSpec(command);
      const tool = tools.find((candidate) => candidate.name === name)!;
      expect(tool.description).toBe(spec.description);
      expect(tool.inputSchema).toEqual(spec.inputSchema);
      expect(tool.outputSchema).toEqual(spec.outputSchema);
    }
  });

  it('serves a tool under the name its config gives it', async () => {
    const { tools } = await bridge.client.listTools();
    const quick = tools.find((tool) => tool.name === 'sleeper_quick')!;
    expect(quick.inputSchema).toEqual(tools.find((tool) => tool.name === 'sleeper')!.inputSchema);
  });
});

describe('tools/call', () => {
  it('runs the TypeScript example and returns structuredContent plus the same JSON as text', async () => {
    const result = await call('echo', { text: 'hello, MCP' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ text: 'hello, MCP' });
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  });

  it.skipIf(!HAS_PYTHON)('runs the foreign Python tool (skipped when python3 is missing)', async () => {
    const result = await call('py_echo', { text: 'ab', times: 2, case: 'upper', decor: { prefix: '<', suffix: '>' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ echo: '<ABAB>', length: 6, scale: 1 });
    expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  });

  it('adds the configured environment to the tool', async () => {
    const result = await call('sleeper', { action: 'wait' });
    expect(result.structuredContent).toMatchObject({ tag: 'from-config' });
    expect((await call('sleeper_quick', { action: 'wait' })).structuredContent).toMatchObject({ tag: '' });
  });

  it('rejects arguments that break the published inputSchema without running the tool', async () => {
    const pidFile = join(dir, 'invalid.pid');
    const result = await call('sleeper', { action: 'wait', seconds: 'soon', pid_file: pidFile });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('Invalid arguments for "sleeper"');
    expect(textOf(result)).toContain('/seconds');
    expect(existsSync(pidFile)).toBe(false);

    const echo = await call('echo', { text: 'x', loud: true });
    expect(echo.isError).toBe(true);
    expect(textOf(echo)).toContain('unknown property "loud"');
  });

  it('refuses arguments with a describe key, which the tool would take for a describe request', async () => {
    const result = await call('sleeper', { action: 'wait', describe: 'json_spec' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Invalid arguments for "sleeper" (checked against its inputSchema; the tool was not run). Correct them and call it again:\n' +
        '- /describe: is reserved by TWYLT for describe requests',
    );
  });

  it('passes an input too big for a command-line argument on stdin', async () => {
    const text = 'x'.repeat(300_000);
    const result = await call('echo', { text });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ text });
  });

  it('kills a tool that writes more than its output limit', async () => {
    const result = await call('echo_small', { text: 'y'.repeat(2 * SMALL_OUTPUT_BYTES) });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(`"echo_small" wrote more than ${SMALL_OUTPUT_BYTES} bytes to its stdout and was stopped.`);
  });

  it.skipIf(!HAS_PYTHON)('rejects invalid input for the Python tool too (skipped when python3 is missing)', async () => {
    const result = await call('py_echo', { times: 2 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('misses required property "text"');
  });

  it("turns a business failure into an isError result: the tool's message for the model, then its error object", async () => {
    const result = await call('sleeper', { action: 'fail' });
    expect(result.isError).toBe(true);
    const [message, object] = result.content as Array<{ type: string; text: string }>;
    expect(message).toEqual({ type: 'text', text: '"sleeper" failed: RuntimeError: failed on request' });
    expect(JSON.parse(object!.text)).toEqual({
      error: {
        type: 'execution_error',
        source: 'tool',
        stage: 'biz',
        message: 'Tool execution failed',
        exception: { type: 'RuntimeError', message: 'failed on request' },
      },
    });
  });

  it.skipIf(!HAS_PYTHON)('carries the Python tool’s business failure too (skipped when python3 is missing)', async () => {
    const result = await call('py_echo', { text: 'x', path: '/nonexistent/twylt-mcp.txt' });
    expect(result.isError).toBe(true);
    const { error } = JSON.parse((result.content as Array<{ text: string }>)[1]!.text);
    expect(error).toMatchObject({ type: 'execution_error', stage: 'biz', exception: { type: 'FileNotFoundError' } });
  });

  it('reports a time-out as an isError result and kills the tool', async () => {
    const pidFile = join(dir, 'timeout.pid');
    const result = await call('sleeper_quick', { action: 'wait', seconds: 60, pid_file: pidFile });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(`did not finish within ${QUICK_TIMEOUT_MS} ms`);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(() => !isRunning(pid), `process ${pid} to end`);
  });

  it('reports a crash as an isError result', async () => {
    const result = await call('sleeper', { action: 'crash' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('killed by SIGTERM');
  });

  it('answers an unknown tool with a protocol error', async () => {
    await expect(call('nope', {})).rejects.toThrow(/Unknown tool: nope/);
  });

  it('still answers after all those failures', async () => {
    expect((await bridge.client.listTools()).tools.length).toBeGreaterThan(0);
    expect((await call('echo', { text: 'still here' })).structuredContent).toEqual({ text: 'still here' });
  });
});

describe('concurrency and cancellation', () => {
  it('completes two calls that are in flight at the same time', async () => {
    const release = join(dir, 'release');
    const pids = [join(dir, 'a.pid'), join(dir, 'b.pid')];
    const calls = pids.map((pidFile) => call('sleeper', { action: 'wait', pid_file: pidFile, release_file: release }));
    // Both tool processes are running at once: neither can finish before the release.
    await waitFor(() => pids.every((file) => existsSync(file)), 'both calls to start');
    writeFileSync(release, '');
    const results = await Promise.all(calls);
    expect(results.map((result) => result.isError)).toEqual([undefined, undefined]);
    expect(results.map((result) => (result.structuredContent as { pid: number }).pid)).toEqual(pids.map((file) => Number(readFileSync(file, 'utf8'))));
  });

  it('kills the tool process when the client cancels the call', async () => {
    const pidFile = join(dir, 'cancel.pid');
    const controller = new AbortController();
    const pending = call('sleeper', { action: 'wait', pid_file: pidFile, release_file: join(dir, 'never') }, { signal: controller.signal });
    const pid = await sleeperPid(pidFile);
    expect(isRunning(pid)).toBe(true);
    controller.abort('changed my mind');
    await expect(pending).rejects.toThrow();
    await waitFor(() => !isRunning(pid), `process ${pid} to end`);
    expect((await call('echo', { text: 'after cancel' })).structuredContent).toEqual({ text: 'after cancel' });
  });
});
