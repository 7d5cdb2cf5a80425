/**
 * `twylt-mcp`, the real command, at the edges a review of the servers found (issue 24): an
 * oversized body sent chunked, the bridge's own credentials and a tool's environment, one
 * call of a JSON-RPC batch cancelled, and a body nested deeper than any tool input needs.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SLEEPER, isRunning, sleeperPid, startBridge, waitFor } from '../support/mcp.js';
import { MCP_HEADERS, rawRequest, sseMessages, startHttpBridge, toolsCall } from '../support/mcp-http.js';
import { ROOT } from '../support/process.js';

const dir = mkdtempSync(join(tmpdir(), 'twylt-mcp-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ENVIRON = [process.execPath, `${ROOT}tests/fixtures/mcp/environ.mjs`];
const TOKEN = 'edges-token-0123456789abcdef';

describe('an oversized body without Content-Length', () => {
  it('sent chunked: 413 like a declared length, no internal error, and the server goes on', async () => {
    const bridge = await startHttpBridge(['--max-body-bytes', '2000', '--', ...SLEEPER]);
    try {
      const body = toolsCall(1, 'sleeper', { action: 'wait', note: 'x'.repeat(100_000) });
      const answer = await rawRequest(bridge.url, { headers: { ...MCP_HEADERS, 'transfer-encoding': 'chunked' }, body });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body)).toMatchObject({ error: { code: -32600, message: 'the request body is larger than 2000 bytes' } });
      // The log line comes through a pipe: wait for it rather than read it at once.
      await waitFor(() => bridge.events().some((event) => event.event === 'refused'), 'the refusal to be logged');
      expect(bridge.events().find((event) => event.event === 'refused')).toMatchObject({ status: 413, remote: '127.0.0.1' });
      expect(bridge.events().filter((event) => event.event === 'error')).toEqual([]);
      const small = await rawRequest(bridge.url, { headers: MCP_HEADERS, body: toolsCall(2, 'sleeper', { action: 'wait', note: 'fits' }) });
      expect(sseMessages(small.body)[0]!.result.structuredContent).toMatchObject({ note: 'fits' });
    } finally {
      await bridge.stop();
    }
  });
});

describe("the bridge's own credentials never reach a tool", () => {
  const secrets = { TWYLT_MCP_TOKEN: TOKEN, TWYLT_MCP_OAUTH_CLIENT_SECRET_FILE: '/run/secrets/client', TWYLT_OTHER: 'kept' };

  it('over HTTP: no TWYLT_MCP_* variable in the environment of a described or called tool', async () => {
    const bridge = await startHttpBridge(['--', ...ENVIRON], secrets);
    try {
      const client = await bridge.connect({ token: TOKEN });
      const result = await client.callTool({ name: 'environ', arguments: {} });
      const env = (result.structuredContent as { env: Record<string, string> }).env;
      expect(Object.keys(env).filter((name) => name.startsWith('TWYLT_MCP_'))).toEqual([]);
      // Everything else of the bridge's environment still reaches the tool.
      expect(env.TWYLT_OTHER).toBe('kept');
      expect(JSON.stringify(result)).not.toContain(TOKEN);
    } finally {
      await bridge.stop();
    }
  });

  it('over stdio too, while a variable the config sets for the tool is kept', async () => {
    const config = join(dir, 'environ.json');
    writeFileSync(config, JSON.stringify({ tools: [{ command: ENVIRON, env: { TWYLT_MCP_FOR_THE_TOOL: 'given' } }] }));
    const bridge = await startBridge(['--config', config], { TWYLT_MCP_TOKEN: TOKEN });
    try {
      const result = await bridge.client.callTool({ name: 'environ', arguments: {} });
      expect((result.structuredContent as { env: Record<string, string> }).env).toMatchObject({ TWYLT_MCP_FOR_THE_TOOL: 'given' });
      expect(JSON.stringify(result)).not.toContain(TOKEN);
    } finally {
      await bridge.close();
    }
  });
});

describe('one call of a JSON-RPC batch cancelled', () => {
  it('kills that call only: the other call of the batch runs on and is answered', async () => {
    const bridge = await startHttpBridge(['--', ...SLEEPER]);
    try {
      const session = 'batch-session';
      const headers = { ...MCP_HEADERS, 'mcp-session-id': session };
      const [cancelPid, keepPid, release] = ['batch-cancel.pid', 'batch-keep.pid', 'batch-release'].map((name) => join(dir, name));
      const batch = `[${toolsCall(1, 'sleeper', { action: 'wait', pid_file: cancelPid, release_file: join(dir, 'never') })},${toolsCall(2, 'sleeper', { action: 'wait', pid_file: keepPid, release_file: release, note: 'kept' })}]`;
      const answer = rawRequest(bridge.url, { headers, body: batch });
      const [cancelled, kept] = [await sleeperPid(cancelPid), await sleeperPid(keepPid)];

      const cancel = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'changed my mind' } });
      expect((await rawRequest(bridge.url, { headers, body: cancel })).status).toBe(202);
      await waitFor(() => !isRunning(cancelled), `the cancelled call's tool (${cancelled}) to end`);
      expect(isRunning(kept)).toBe(true);

      writeFileSync(release, '');
      const messages = sseMessages((await answer).body);
      expect(messages.map((message) => message.id)).toEqual([2]);
      expect(messages[0]!.result.structuredContent).toMatchObject({ pid: kept, note: 'kept' });
      await waitFor(() => bridge.events().filter((event) => event.event === 'call').length === 2, 'both calls to be logged');
      expect(bridge.events().filter((event) => event.event === 'call').map((event) => event.outcome).sort()).toEqual(['cancelled', 'ok']);
    } finally {
      await bridge.stop();
    }
  });
});

describe('a body nested deeper than any tool input needs', () => {
  it('is refused as a parse error (400) before it is parsed, and the server goes on', async () => {
    const bridge = await startHttpBridge(['--', ...SLEEPER]);
    try {
      const depth = 100_000;
      const body = toolsCall(1, 'sleeper', { action: 'wait', note: 'x' }).replace('"note":"x"', `"note":${'['.repeat(depth)}${']'.repeat(depth)}`);
      const answer = await rawRequest(bridge.url, { headers: MCP_HEADERS, body });
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).error).toEqual({ code: -32700, message: 'Parse error: the JSON is nested deeper than 1000 levels' });
      // 990 levels in the arguments, 3 around them (message, params, arguments): within the bound.
      const nested = JSON.parse(`${'['.repeat(990)}${']'.repeat(990)}`);
      const fine = await rawRequest(bridge.url, { headers: MCP_HEADERS, body: toolsCall(2, 'sleeper', { action: 'wait', note: 'fine', deep: nested }) });
      // Deep, but within the bound: the tool's own validation answers (no such field).
      expect(sseMessages(fine.body)[0]!.result.isError).toBe(true);
    } finally {
      await bridge.stop();
    }
  });
});
