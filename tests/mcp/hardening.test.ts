/**
 * The bridge over stdio, line by line, where an SDK client cannot go: arguments that would
 * stall a backtracking regex engine, lines that are too long or not JSON-RPC, call params of
 * the wrong kind; and how the bridge reports a tool that breaks its outputSchema, is denied
 * by its guardrails, or dies with a long stderr (tests/fixtures/mcp/misfit.mjs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BRIDGE_CLI, MISFIT, startRawBridge, type RawBridge } from '../support/mcp.js';
import { MCP_HEADERS, rawRequest, sseMessages, startHttpBridge, toolsCall } from '../support/mcp-http.js';
import { ROOT, fixture, run } from '../support/process.js';

/** The pattern misfit publishes for `text`; JavaScript's engine needs seconds on HOSTILE. */
const PATTERN = '^(\\w+\\s?)*$';
const HOSTILE = `${'a'.repeat(30)}!`;
/** Far more than the bridge needs for any of these answers, far less than a stalled check. */
const PROMPT_MS = 5000;

let bridge: RawBridge;
let nextId = 1;

beforeAll(async () => {
  bridge = await startRawBridge(['--max-message-bytes', '1000', '--', ...MISFIT]);
});

afterAll(() => {
  // SIGKILL: a stalled bridge (the bug these tests catch) answers nothing else.
  bridge?.child.kill('SIGKILL');
});

const call = (args: unknown, ms = PROMPT_MS) => bridge.request('tools/call', { name: 'misfit', arguments: args }, nextId++, ms);

describe('a backtracking-prone pattern', () => {
  it('does not stall the bridge: the hostile call and the requests beside it are answered at once', async () => {
    const started = Date.now();
    const [hostile, list, echo] = await Promise.all([
      call({ action: 'echo', text: HOSTILE }),
      bridge.request('tools/list', {}, nextId++, PROMPT_MS),
      call({ action: 'echo', text: 'two words' }),
    ]);
    expect(Date.now() - started).toBeLessThan(PROMPT_MS);
    expect(hostile.result.isError).toBe(true);
    expect(hostile.result.content[0].text).toBe(
      `Invalid arguments for "misfit" (checked against its inputSchema; the tool was not run). Correct them and call it again:\n- /text: must match the pattern /${PATTERN}/ (got ${JSON.stringify(HOSTILE)})`,
    );
    expect(list.result.tools[0].inputSchema.properties.text.pattern).toBe(PATTERN);
    expect(echo.result.structuredContent).toEqual({ text: 'two words' });
  });

  it('does not stall the bridge over --http either: the hostile call and a health check are answered at once', async () => {
    const http = await startHttpBridge(['--', ...MISFIT]);
    try {
      const started = Date.now();
      const [hostile, health] = await Promise.all([
        rawRequest(http.url, { headers: MCP_HEADERS, body: toolsCall(1, 'misfit', { action: 'echo', text: HOSTILE }) }),
        rawRequest(`${http.base}/healthz`, { method: 'GET' }),
      ]);
      expect(Date.now() - started).toBeLessThan(PROMPT_MS);
      expect(health.status).toBe(200);
      const [answer] = sseMessages(hostile.body);
      expect(answer!.result.isError).toBe(true);
      expect(answer!.result.content[0].text).toContain(`- /text: must match the pattern /${PATTERN}/ (got ${JSON.stringify(HOSTILE)})`);
    } finally {
      http.child.kill('SIGKILL');
    }
  });
});

describe('lines the bridge cannot serve', () => {
  it('answers a line over --max-message-bytes with -32600 and id null, and serves the next one', async () => {
    bridge.send(JSON.stringify({ jsonrpc: '2.0', id: 900, method: 'tools/list', params: { padding: 'x'.repeat(5000) } }));
    const refused = await bridge.answer((message) => message.id === null, 'the refusal of the long line');
    expect(refused.error).toEqual({
      code: -32600,
      message: 'Invalid Request: a message is longer than 1000 bytes, the limit of this bridge (--max-message-bytes); it was not read',
    });
    const list = await bridge.request('tools/list', {}, nextId++);
    expect(list.result.tools).toHaveLength(1);
    expect(bridge.stderr()).toContain('twylt-mcp: MCP: Invalid Request: a message is longer than 1000 bytes');
  });

  it('answers a line that is not JSON with -32700 Parse error, id null, and serves the next one', async () => {
    bridge.send('{"jsonrpc": "2.0", "id": 901, "method": tools/list}');
    const refused = await bridge.answer((message) => message.id === null, 'the parse error');
    expect(refused.error.code).toBe(-32700);
    expect(refused.error.message).toMatch(/^Parse error: the line is not JSON \(.+\)$/);
    expect((await bridge.request('tools/list', {}, nextId++)).result.tools).toHaveLength(1);
  });

  it('answers JSON that is no JSON-RPC message with -32600, under its id when it has one', async () => {
    bridge.send(JSON.stringify({ id: 902, method: 'tools/list' }));
    const refused = await bridge.answer((message) => message.id === 902, 'the invalid request');
    expect(refused.error).toEqual({ code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 request, notification or response object' });
    bridge.send('[1, 2]');
    expect((await bridge.answer((message) => message.id === null, 'the refused batch')).error.code).toBe(-32600);
  });
});

describe('call params of the wrong kind', () => {
  it.each([
    ['a string', 'text'],
    ['an array', [1, 2]],
    ['a number', 7],
  ])('arguments given as %s: -32602 with a sentence', async (kind, args) => {
    const answer = await call(args);
    expect(answer.error).toEqual({ code: -32602, message: `Invalid params: "arguments" must be a JSON object, the tool's input; got ${kind}` });
  });

  it('a name that is no string: -32602 with a sentence', async () => {
    const answer = await bridge.request('tools/call', { name: 5, arguments: {} }, nextId++);
    expect(answer.error).toEqual({ code: -32602, message: 'Invalid params: "name" must be a string, the name of a tool from tools/list; got a number' });
  });
});

/**
 * Params the SDK's schemas refuse, for methods beside tools/call's own checks: the schema a
 * method registers, the SDK's own ones (initialize, ping), and `_meta`, which the transport
 * checks. Each is -32602 and one sentence, never -32603 or -32600 with Zod's JSON dump.
 */
const REFUSED_PARAMS: Array<[string, string, unknown, string]> = [
  ['tools/list, a cursor that is no string', 'tools/list', { cursor: 5 }, 'cursor: expected a string, got a number'],
  ['initialize, a protocolVersion that is no string', 'initialize', { protocolVersion: 5, capabilities: {}, clientInfo: { name: 'raw', version: '0' } }, 'protocolVersion: expected a string, got a number'],
  [
    'initialize, empty params',
    'initialize',
    {},
    'protocolVersion: expected a string, got nothing; capabilities: expected an object, got nothing; clientInfo: expected an object, got nothing',
  ],
  ['initialize, no params', 'initialize', undefined, 'params: expected an object, got nothing'],
  ['tools/call, a task that is no object', 'tools/call', { name: 'misfit', arguments: { action: 'echo' }, task: 5 }, 'task: expected an object, got a number'],
  ['ping, a _meta that is no object', 'ping', { _meta: 3 }, '_meta: expected an object, got a number'],
  ['tools/call, a progressToken that is an array', 'tools/call', { name: 'misfit', arguments: { action: 'echo' }, _meta: { progressToken: [1] } }, '_meta.progressToken: expected a string or a number, got an array'],
  ['tools/call, params that are no object', 'tools/call', 5, 'params: expected an object, got a number'],
];

describe('params the SDK refuses, for every method', () => {
  it.each(REFUSED_PARAMS)('%s: -32602 and a sentence over stdio', async (_, method, params, sentence) => {
    const answer = await bridge.request(method, params, nextId++);
    expect(answer.error).toEqual({ code: -32602, message: `Invalid params: ${sentence}` });
  });

  it('the same answers over --http, under the request’s id', async () => {
    const http = await startHttpBridge(['--', ...MISFIT]);
    try {
      for (const [what, method, params, sentence] of REFUSED_PARAMS) {
        const id = nextId++;
        const response = await rawRequest(http.url, { headers: MCP_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
        const [answer] = String(response.headers['content-type']).startsWith('text/event-stream') ? sseMessages(response.body) : [JSON.parse(response.body)];
        expect([what, response.status, answer]).toEqual([what, 200, { jsonrpc: '2.0', id, error: { code: -32602, message: `Invalid params: ${sentence}` } }]);
      }
    } finally {
      http.child.kill('SIGKILL');
    }
  });
});

describe('the log', () => {
  it('puts the prefix on every line of a multi-line entry', async () => {
    const missing = [process.execPath, `${ROOT}tests/fixtures/mcp/no-such-tool.mjs`];
    const result = await run([process.execPath, BRIDGE_CLI, '--', ...missing, '--', ...missing], { timeoutMs: 20_000 });
    expect(result.code).toBe(1);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('twylt-mcp: cannot start:');
    expect(lines.filter((line) => line.includes('cannot describe tool'))).toHaveLength(2);
    expect(lines.filter((line) => !line.startsWith('twylt-mcp: '))).toEqual([]);
  });
});

describe('failures of the tool, as the bridge reports them', () => {
  it('output that breaks its own outputSchema: isError with the issues, no structuredContent', async () => {
    const { result } = await call({ action: 'bad_output' });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(result.content).toEqual([
      { type: 'text', text: '"misfit" returned output that does not match its published outputSchema:\n- /text: must be a string (got 42)' },
    ]);
  });

  it('exit 6: denied by its guardrails, with the code, the reason and the error object', async () => {
    const { result } = await call({ action: 'deny' });
    expect(result.isError).toBe(true);
    expect(result.content[0]).toEqual({
      type: 'text',
      text: '"misfit" was denied by its guardrails policy (path_outside_workspace): PermissionError: path is outside the workspace: /etc/passwd',
    });
    const { error } = JSON.parse(result.content[1].text);
    expect(error).toMatchObject({ type: 'guardrails_error', stage: 'guardrails', code: 'path_outside_workspace', incident_id: '0f6c1b9e-7a55-4d3f-9a0e-3c1f2b4d5e6f' });
    expect(result.content).toHaveLength(2);
  });

  it('a long stderr is cut to its last 1000 characters, after "..."', async () => {
    const { result } = await call({ action: 'noisy' });
    expect(result.isError).toBe(true);
    const [head, tail] = result.content[0].text.split('\nIts stderr ends:\n');
    expect(head).toMatch(/^"misfit" broke the TWYLT protocol: .*\b7\b/);
    // 3000 characters: HEAD, 2992 x, TAIL. Kept: the last 1000 (996 x, then TAIL).
    expect(tail).toBe(`...${'x'.repeat(996)}TAIL`);
  });
});

describe('the default message limit', () => {
  it('refuses a line over 10 MiB, serves the next, and ends with 0 only when stdin closes', async () => {
    const fresh = await startRawBridge(['--', ...MISFIT]);
    try {
      fresh.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { padding: 'x'.repeat(10 * 1024 * 1024) } }));
      const refused = await fresh.answer((message) => message.id === null, 'the refusal of the 10 MiB line');
      expect(refused.error).toEqual({
        code: -32600,
        message: 'Invalid Request: a message is longer than 10485760 bytes, the limit of this bridge (--max-message-bytes); it was not read',
      });
      expect((await fresh.request('tools/list', {}, 2)).result.tools).toHaveLength(1);
      expect(fresh.child.exitCode).toBeNull();
      fresh.child.stdin.end();
      expect(await fresh.exited).toBe(0);
    } finally {
      fresh.child.kill('SIGKILL');
    }
  });
});

describe('a last line without a newline before stdin ends', () => {
  it('is served, then the bridge ends with 0', async () => {
    const fresh = await startRawBridge(['--', ...MISFIT]);
    try {
      fresh.child.stdin.end(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }));
      const list = await fresh.answer((message) => message.id === 7, 'the answer to the last line');
      expect(list.result.tools).toHaveLength(1);
      expect(await fresh.exited).toBe(0);
    } finally {
      fresh.child.kill('SIGKILL');
    }
  });

  it('over --max-message-bytes: answered with -32600, then the bridge ends with 0', async () => {
    const fresh = await startRawBridge(['--max-message-bytes', '1000', '--', ...MISFIT]);
    try {
      fresh.child.stdin.end(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list', params: { padding: 'x'.repeat(5000) } }));
      const refused = await fresh.answer((message) => message.id === null, 'the refusal of the last line');
      expect(refused.error).toEqual({
        code: -32600,
        message: 'Invalid Request: a message is longer than 1000 bytes, the limit of this bridge (--max-message-bytes); it was not read',
      });
      expect(await fresh.exited).toBe(0);
    } finally {
      fresh.child.kill('SIGKILL');
    }
  });
});

describe('arguments the tool’s runtime cannot read', () => {
  it('an integer beyond 2^53 for a TypeScript tool: invalid input the model can correct, not a broken tool', async () => {
    const fresh = await startRawBridge(['--', ...fixture('behaviours')]);
    try {
      // Written by hand: the bridge keeps these digits, and the tool refuses to round them.
      fresh.send('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"behaviours","arguments":{"action":"ok","size":9007199254740993}}}');
      const { result } = await fresh.answer((message) => message.id === 9, 'the answer to the call');
      expect(result.isError).toBe(true);
      expect(result.content[0].text).toMatch(
        /^"behaviours" cannot read its arguments as they are\. Change them and call it again: InexactInteger: The JSON on the command-line argument has the integer 9007199254740993 at size, which a JavaScript number cannot hold exactly /,
      );
      expect(JSON.parse(result.content[1].text).error).toMatchObject({ stage: 'transport', exception: { type: 'InexactInteger' } });
    } finally {
      fresh.child.kill('SIGKILL');
    }
  });
});
