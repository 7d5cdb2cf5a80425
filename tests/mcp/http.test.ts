/**
 * `twylt-mcp --http`, the real command on 127.0.0.1: tools/list and tools/call with the MCP
 * SDK's own Streamable HTTP client (the TypeScript example and the foreign Python tool),
 * exact numbers on the raw HTTP body, the access checks (token, Origin, Host) with proof that
 * nothing was spawned, bounded bodies, JSON-RPC errors for bad requests, /healthz, the
 * structured call log, and the refusals at start.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_PYTHON, PY_ECHO, SLEEPER, BRIDGE_CLI, bridgeEnv, textOf, waitFor } from '../support/mcp.js';
import { MCP_HEADERS, lineCount, rawRequest, sseMessages, startHttpBridge, toolsCall, type HttpBridgeProcess } from '../support/mcp-http.js';
import { example, run } from '../support/process.js';
import { NO_PYTHON_REASON, noPython, pythonNumbersTool } from '../support/python.js';

const ECHO = example('echo');
const TOKEN = 'test-token-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'twylt-mcp-http-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `-- CMD -- CMD...` */
const tools = (...commands: ReadonlyArray<readonly string[]>) => commands.flatMap((command) => ['--', ...command]);

describe('tools over HTTP, with the SDK client', () => {
  let bridge: HttpBridgeProcess;
  beforeAll(async () => {
    bridge = await startHttpBridge(tools(ECHO, ...(HAS_PYTHON ? [PY_ECHO] : [])));
  });
  afterAll(() => bridge?.stop());

  it('lists the tools with their published schemas', async () => {
    const client = await bridge.connect();
    const { tools: listed } = await client.listTools();
    expect(listed.map((tool) => tool.name).sort()).toEqual(['echo', ...(HAS_PYTHON ? ['py_echo'] : [])]);
    const spec = JSON.parse((await run([...ECHO, '{"describe": "json_spec"}'])).stdout);
    const echo = listed.find((tool) => tool.name === 'echo')!;
    expect(echo.inputSchema).toEqual(spec.inputSchema);
    expect(echo.outputSchema).toEqual(spec.outputSchema);
  });

  it('calls the TypeScript example', async () => {
    const client = await bridge.connect();
    const result = await client.callTool({ name: 'echo', arguments: { text: 'over HTTP' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ text: 'over HTTP' });
    expect(JSON.parse(textOf(result))).toEqual({ text: 'over HTTP' });
  });

  it.skipIf(!HAS_PYTHON)('calls the foreign Python tool (skipped when python3 is missing)', async () => {
    const client = await bridge.connect();
    const result = await client.callTool({ name: 'py_echo', arguments: { text: 'ab', times: 2, case: 'upper' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ echo: 'ABAB', length: 4, scale: 1 });
  });

  it('answers failures as isError results, as over stdio', async () => {
    const client = await bridge.connect();
    const result = await client.callTool({ name: 'echo', arguments: { text: 'x', loud: true } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('unknown property "loud"');
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/Unknown tool: nope/);
  });

  it('hands each client a correlation id at initialize, and needs it for nothing else', async () => {
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    const first = await rawRequest(bridge.url, { headers: MCP_HEADERS, body: init });
    expect(first.headers['mcp-session-id']).toMatch(/^[0-9a-f-]{36}$/);
    // A request with no id at all, or an id never handed out, is answered all the same.
    for (const session of [undefined, 'made-up']) {
      const headers = session ? { ...MCP_HEADERS, 'mcp-session-id': session } : MCP_HEADERS;
      const answer = await rawRequest(bridge.url, { headers, body: toolsCall(2, 'echo', { text: 'no session needed' }) });
      expect(answer.status).toBe(200);
      expect(sseMessages(answer.body)[0]!.result.structuredContent).toEqual({ text: 'no session needed' });
    }
  });
});

describe.skipIf(noPython)(`numbers over HTTP, on the raw response (${noPython ? NO_PYTHON_REASON : 'python3'})`, () => {
  it('passes a client’s big integer to the tool and the tool’s numbers back, digit for digit', async () => {
    const bridge = await startHttpBridge(tools(pythonNumbersTool()));
    try {
      // Written by hand: JSON.stringify cannot write these numbers.
      const body = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"py_numbers","arguments":{"n":123456789012345678901234567890123}}}';
      const answer = await rawRequest(bridge.url, { headers: MCP_HEADERS, body });
      expect(answer.status).toBe(200);
      const numbers =
        '"modified_ns":1796084204906049009,"negative":-1796084204906049009,"beyond_64_bits":123456789012345678901234567890,' +
        '"tenth":0.1,"tiny":1e-07,"whole":1.0,"large":1e+16,"third":0.3333333333333333,"small_int":42';
      const output = `{"echo":123456789012345678901234567890123,${numbers}}`;
      expect(answer.body).toContain(`"structuredContent":${output}`);
      expect(answer.body).toContain(JSON.stringify(output));
      // 1.0 in, 1.0 out; and an id written 7.0 is still the request's id.
      const whole = await rawRequest(bridge.url, {
        headers: MCP_HEADERS,
        body: '{"jsonrpc":"2.0","id":8.0,"method":"tools/call","params":{"name":"py_numbers","arguments":{"n":1.0}}}',
      });
      expect(whole.body).toContain('"structuredContent":{"echo":1.0,');
      expect(sseMessages(whole.body)[0]!.id).toBe(8);
    } finally {
      await bridge.stop();
    }
  });
});

describe('access: token, Origin, Host', () => {
  let bridge: HttpBridgeProcess;
  const sleeperLog = join(dir, 'access-starts.log');
  const call = toolsCall(1, 'sleeper', { action: 'wait' });
  const good = { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` };

  beforeAll(async () => {
    bridge = await startHttpBridge(['--allow-origin', 'https://app.example.com', ...tools(SLEEPER)], { TWYLT_MCP_TOKEN: TOKEN, SLEEPER_LOG: sleeperLog });
  });
  afterAll(() => bridge?.stop());

  it('refuses a call without a token, with a wrong one, from a foreign Origin: 401/403 and nothing runs', async () => {
    const before = lineCount(sleeperLog); // the describe at start-up
    expect(before).toBe(1);
    const cases: Array<[Record<string, string>, number, RegExp]> = [
      [MCP_HEADERS, 401, /a valid token is required/],
      [{ ...MCP_HEADERS, authorization: 'Bearer wrong-token-0123456789abcdef' }, 401, /a valid token is required/],
      [{ ...MCP_HEADERS, authorization: TOKEN }, 401, /a valid token is required/],
      [{ ...good, origin: 'https://evil.example' }, 403, /Origin "https:\/\/evil.example" is not allowed/],
    ];
    for (const [headers, status, reason] of cases) {
      const answer = await rawRequest(bridge.url, { headers, body: call });
      expect(answer.status).toBe(status);
      const { error } = JSON.parse(answer.body);
      expect(error.message).toMatch(reason);
      if (status === 401) expect(answer.headers['www-authenticate']).toBe('Bearer realm="twylt-mcp"');
    }
    expect(lineCount(sleeperLog)).toBe(before);
    // The same call with the token runs the tool: the count would have shown a run.
    const answer = await rawRequest(bridge.url, { headers: good, body: call });
    expect(answer.status).toBe(200);
    expect(sseMessages(answer.body)[0]!.result.structuredContent).toMatchObject({ tag: '' });
    expect(lineCount(sleeperLog)).toBe(before + 1);
    const refused = () => bridge.events().filter((event) => event.event === 'refused');
    await waitFor(() => refused().length >= 4, 'four refusal log lines');
    expect(refused().map((event) => event.status)).toEqual([401, 401, 401, 403]);
  });

  it('the SDK client without the token cannot connect; with it, it can', async () => {
    await expect(bridge.connect()).rejects.toMatchObject({ code: 401, message: expect.stringContaining('a valid token is required') });
    const client = await bridge.connect({ token: TOKEN });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['sleeper']);
  });

  it('lets an allowed browser origin in, with CORS headers and a preflight', async () => {
    const origin = 'https://app.example.com';
    const answer = await rawRequest(bridge.url, { headers: { ...good, origin }, body: toolsCall(3, 'sleeper', { action: 'wait' }) });
    expect(answer.status).toBe(200);
    expect(answer.headers['access-control-allow-origin']).toBe(origin);
    const preflight = await rawRequest(bridge.url, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-headers']).toContain('authorization');
    const foreign = await rawRequest(bridge.url, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
  });

  it('with a token and no --allow-host, takes any Host: a rebinding page cannot send the token', async () => {
    const answer = await rawRequest(bridge.url, { headers: { ...good, host: 'rebound.example:80' }, body: toolsCall(4, 'sleeper', { action: 'wait' }) });
    expect(answer.status).toBe(200);
    const refused = await rawRequest(bridge.url, { headers: { ...MCP_HEADERS, host: 'rebound.example:80' }, body: call });
    expect(refused.status).toBe(401);
  });

  it('answers GET /healthz without a token and runs nothing', async () => {
    const before = lineCount(sleeperLog);
    const answer = await rawRequest(`${bridge.base}/healthz`, { method: 'GET' });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ status: 'ok', running: 0, queued: 0 });
    expect(lineCount(sleeperLog)).toBe(before);
  });
});

describe('Host checks', () => {
  it('without a token (loopback only) accepts only the loopback names of its port', async () => {
    const log = join(dir, 'host-starts.log');
    const bridge = await startHttpBridge(tools(SLEEPER), { SLEEPER_LOG: log });
    try {
      const port = new URL(bridge.url).port;
      const call = toolsCall(1, 'sleeper', { action: 'wait' });
      for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1:${Number(port) + 1}`]) {
        const answer = await rawRequest(bridge.url, { headers: { ...MCP_HEADERS, host }, body: call });
        expect(answer.status).toBe(403);
        expect(JSON.parse(answer.body).error.message).toContain('is not one of this server');
      }
      expect(lineCount(log)).toBe(1);
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
        const answer = await rawRequest(bridge.url, { headers: { ...MCP_HEADERS, host }, body: call });
        expect(answer.status).toBe(200);
      }
      expect(lineCount(log)).toBe(3);
    } finally {
      await bridge.stop();
    }
  });

  it('with --allow-host, accepts those names (bare, as behind a proxy, or with the port) and no other, token or not', async () => {
    const log = join(dir, 'allow-host-starts.log');
    const bridge = await startHttpBridge(['--allow-host', 'mcp.example.com', ...tools(SLEEPER)], { TWYLT_MCP_TOKEN: TOKEN, SLEEPER_LOG: log });
    try {
      const port = new URL(bridge.url).port;
      const headers = { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` };
      const call = toolsCall(1, 'sleeper', { action: 'wait' });
      const foreign = await rawRequest(bridge.url, { headers: { ...headers, host: 'evil.example' }, body: call });
      expect(foreign.status).toBe(403);
      expect(lineCount(log)).toBe(1);
      for (const host of ['mcp.example.com', `mcp.example.com:${port}`, `127.0.0.1:${port}`]) {
        expect((await rawRequest(bridge.url, { headers: { ...headers, host }, body: call })).status).toBe(200);
      }
      expect(lineCount(log)).toBe(4);
    } finally {
      await bridge.stop();
    }
  });
});

describe('bad requests get JSON-RPC errors', () => {
  let bridge: HttpBridgeProcess;
  beforeAll(async () => {
    bridge = await startHttpBridge(['--max-body-bytes', '2000', ...tools(ECHO)]);
  });
  afterAll(() => bridge?.stop());

  const errorOf = (body: string) => JSON.parse(body) as { jsonrpc: string; id: null; error: { code: number; message: string } };

  it('malformed JSON: 400 and a parse error', async () => {
    const answer = await rawRequest(bridge.url, { headers: MCP_HEADERS, body: '{"jsonrpc": "2.0", "id": 1, "method": ' });
    expect(answer.status).toBe(400);
    expect(errorOf(answer.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    expect(errorOf(answer.body).error.message).toMatch(/^Parse error: /);
  });

  it('JSON that is no JSON-RPC message: the SDK’s 400', async () => {
    const answer = await rawRequest(bridge.url, { headers: MCP_HEADERS, body: '{"hello": "world"}' });
    expect(answer.status).toBe(400);
    expect(errorOf(answer.body).error.code).toBe(-32700);
  });

  it('a body over --max-body-bytes: 413, and the server goes on', async () => {
    const answer = await rawRequest(bridge.url, { headers: MCP_HEADERS, body: toolsCall(1, 'echo', { text: 'x'.repeat(3000) }) });
    expect(answer.status).toBe(413);
    expect(errorOf(answer.body)).toMatchObject({ error: { code: -32600, message: 'the request body is larger than 2000 bytes' } });
    const small = await rawRequest(bridge.url, { headers: MCP_HEADERS, body: toolsCall(2, 'echo', { text: 'fits' }) });
    expect(sseMessages(small.body)[0]!.result.structuredContent).toEqual({ text: 'fits' });
  });

  it('GET and DELETE /mcp: 405 (stateless: no stream, no session); another path: 404', async () => {
    for (const method of ['GET', 'DELETE']) {
      const answer = await rawRequest(bridge.url, { method, headers: { accept: 'text/event-stream' } });
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe('POST');
    }
    expect((await rawRequest(`${bridge.base}/other`, { headers: MCP_HEADERS, body: '{}' })).status).toBe(404);
  });

  it('a shell-looking argument is just a string to the tool', async () => {
    const text = '$(touch /tmp/twylt-pwned); `id` | rm -rf / ; echo';
    const answer = await rawRequest(bridge.url, { headers: MCP_HEADERS, body: toolsCall(3, 'echo', { text }) });
    expect(sseMessages(answer.body)[0]!.result.structuredContent).toEqual({ text });
  });
});

describe('the call log', () => {
  it('writes one JSON line per call (tool, outcome, exit code, duration) and never the input', async () => {
    const bridge = await startHttpBridge(tools(ECHO));
    try {
      const client = await bridge.connect();
      await client.callTool({ name: 'echo', arguments: { text: 'secret-in-the-input' } });
      await client.callTool({ name: 'echo', arguments: { text: 'secret-in-the-input', loud: true } });
      // The answer can arrive before the bridge's stderr line does.
      const calls = () => bridge.events().filter((event) => event.event === 'call');
      await waitFor(() => calls().length >= 2, 'two call log lines');
      expect(calls()).toHaveLength(2);
      const [first, second] = calls();
      expect(first).toMatchObject({ tool: 'echo', outcome: 'ok', exitCode: 0 });
      expect(second).toMatchObject({ tool: 'echo', outcome: 'invalid_input', exitCode: null, errorType: 'SchemaMismatchError' });
      for (const call of [first!, second!]) {
        expect(typeof call.durationMs).toBe('number');
        expect(typeof call.queuedMs).toBe('number');
        expect(Date.parse(call.time)).not.toBeNaN();
      }
      expect(bridge.stderr()).not.toContain('secret-in-the-input');
    } finally {
      await bridge.stop();
    }
  });

  it('with --log-input, writes the arguments too', async () => {
    const bridge = await startHttpBridge(['--log-input', ...tools(ECHO)]);
    try {
      const client = await bridge.connect();
      await client.callTool({ name: 'echo', arguments: { text: 'logged on purpose' } });
      await waitFor(() => bridge.events().some((event) => event.event === 'call'), 'the call log line');
      expect(bridge.events().find((event) => event.event === 'call')).toMatchObject({ input: { text: 'logged on purpose' } });
    } finally {
      await bridge.stop();
    }
  });

  it('logs a failing tool’s exit code and error type, not its message', async () => {
    const bridge = await startHttpBridge(tools(SLEEPER));
    try {
      const client = await bridge.connect();
      expect((await client.callTool({ name: 'sleeper', arguments: { action: 'fail' } })).isError).toBe(true);
      expect(bridge.events().find((event) => event.event === 'call')).toMatchObject({
        tool: 'sleeper',
        outcome: 'failed',
        exitCode: 5,
        errorType: 'execution_error',
        stage: 'biz',
      });
      expect(bridge.stderr()).not.toContain('failed on request');
    } finally {
      await bridge.stop();
    }
  });
});

describe('starting', () => {
  /** Run the command to its end (a refusal); stdin closed. */
  function refusal(args: string[], env: Record<string, string> = {}) {
    return run([process.execPath, BRIDGE_CLI, ...args], { env: { ...bridgeEnv(), ...env }, cleanEnv: true });
  }

  it('refuses to listen beyond loopback without a token, before running any tool', async () => {
    const log = join(dir, 'unsafe-starts.log');
    const result = await refusal(['--http', '0.0.0.0:0', ...tools(SLEEPER)], { SLEEPER_LOG: log });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('refusing to listen on 0.0.0.0 without a token');
    expect(result.stderr).toContain('set TWYLT_MCP_TOKEN or give --token-file FILE');
    expect(lineCount(log)).toBe(0);
  });

  it('reads the token from --token-file', async () => {
    const file = join(dir, 'token');
    writeFileSync(file, `${TOKEN}\n`);
    const bridge = await startHttpBridge(['--token-file', file, ...tools(ECHO)]);
    try {
      expect((await rawRequest(bridge.url, { headers: MCP_HEADERS, body: toolsCall(1, 'echo', { text: 'x' }) })).status).toBe(401);
      const client = await bridge.connect({ token: TOKEN });
      expect((await client.callTool({ name: 'echo', arguments: { text: 'x' } })).structuredContent).toEqual({ text: 'x' });
    } finally {
      await bridge.stop();
    }
  });

  it('refuses a short token, two tokens, HTTP options without --http, and a bad origin (exit 64)', async () => {
    const file = join(dir, 'token2');
    writeFileSync(file, TOKEN);
    const cases: Array<[string[], Record<string, string>, string]> = [
      [['--http', '0'], { TWYLT_MCP_TOKEN: 'short' }, 'must be at least 16 characters'],
      [['--http', '0', '--token-file', file], { TWYLT_MCP_TOKEN: TOKEN }, 'not both'],
      [['--token-file', file], {}, '--token-file needs --http [HOST:]PORT'],
      [['--http', '0', '--allow-origin', 'https://app.example.com/path'], {}, '--allow-origin: an origin is scheme, host and port only'],
      [['--http', 'nowhere'], {}, '--http: expected [HOST:]PORT'],
      [['--max-concurrency', '0'], {}, '--max-concurrency takes a whole number of at least 1; got "0"'],
    ];
    for (const [args, env, message] of cases) {
      const result = await refusal([...args, ...tools(ECHO)], env);
      expect(result.code, args.join(' ')).toBe(64);
      expect(result.stderr).toContain(message);
    }
  });

  it('documents HTTP mode in --help', async () => {
    const help = await refusal(['--help']);
    for (const option of ['--http [HOST:]PORT', '--token-file', '--allow-origin', '--allow-host', '--max-concurrency', '--max-queue', '--max-body-bytes', '--grace-ms', '--log-input', '-32010', '/healthz']) {
      expect(help.stdout).toContain(option);
    }
  });
});
