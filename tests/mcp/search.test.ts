/**
 * Search mode end to end: the real `twylt-mcp --catalog search`, over stdio and over HTTP,
 * driven by the MCP SDK's client. Two MCP tools whatever the catalog's size; twylt_search
 * finds tools by what they say about themselves (names split, descriptions, enums, few-shot
 * inputs) and returns them ready to call; twylt_call is browse mode's; per-tool scopes hide
 * the tools a caller may not call; an embeddings endpoint that fails gives lexical results.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchCatalog } from '../support/search-catalog.js';
import { startAuthServer, type AuthServer } from '../support/auth-server.js';
import { startBridge, type Bridge } from '../support/mcp.js';
import { MCP_HEADERS, rawRequest, sseMessages, startHttpBridge, type HttpBridgeProcess } from '../support/mcp-http.js';
import { JS_RUNTIME } from '../support/runtimes.js';

let dir: string;
let config: string;
let stdio: Bridge;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'twylt-mcp-search-'));
  config = join(dir, 'catalog.json');
  writeFileSync(config, JSON.stringify(searchCatalog(JS_RUNTIME)));
  stdio = await startBridge(['--catalog', 'search', '--config', config]);
}, 60_000);

afterAll(async () => {
  await stdio?.close();
  rmSync(dir, { recursive: true, force: true });
});

type Found = { name: string; category: string; description: string; inputSchema: Record<string, unknown>; score: number };

async function search(client: Bridge['client'], args: Record<string, unknown>) {
  const result = await client.callTool({ name: 'twylt_search', arguments: args });
  return result as { isError?: boolean; structuredContent?: { tools: Found[] }; content: Array<{ type: string; text: string }> };
}

const names = (tools: Found[] | undefined) => (tools ?? []).map((tool) => tool.name);

describe('search mode over stdio', () => {
  it('offers exactly twylt_search and twylt_call, in at most 2 KiB with instructions that say to search first', async () => {
    const { tools } = await stdio.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['twylt_search', 'twylt_call']);
    const instructions = stdio.client.getInstructions() ?? '';
    expect(instructions).toMatch(/catalog of 12 tools/);
    expect(instructions).toMatch(/first call twylt_search/);
    expect(Buffer.byteLength(JSON.stringify({ tools })) + Buffer.byteLength(instructions)).toBeLessThanOrEqual(2048);
  });

  it('finds a tool by what it does, best first, with its schema, as structuredContent and the same as text', async () => {
    const result = await search(stdio.client, { query: 'open a PR to merge my branch' });
    expect(result.isError).toBeFalsy();
    const found = result.structuredContent!.tools;
    expect(found[0]).toMatchObject({ name: 'create_pull_request', category: 'github/pulls', description: 'Create a new pull request in a GitHub repository' });
    expect(Object.keys(found[0]!.inputSchema.properties as object)).toEqual(['owner', 'repo', 'title', 'head', 'base']);
    expect(found.length).toBeLessThanOrEqual(5);
    expect(found.map((tool) => tool.score)).toEqual([...found.map((tool) => tool.score)].sort((a, b) => b - a));
    expect(JSON.parse(result.content[0]!.text)).toEqual(result.structuredContent);
  });

  it('splits names (camelCase, kebab-case), reads enum values and few-shot inputs, and forgives a typo', async () => {
    expect(names((await search(stdio.client, { query: 'convert time zone' })).structuredContent?.tools)[0]).toBe('convertTime');
    expect(names((await search(stdio.client, { query: 'which issues are closed' })).structuredContent?.tools)[0]).toBe('list_issues');
    // "invoices" is in no name or description: only in query-database's few-shot input.
    expect(names((await search(stdio.client, { query: 'invoices' })).structuredContent?.tools)).toEqual(['query-database']);
    expect(names((await search(stdio.client, { query: 'screenshto of the page' })).structuredContent?.tools)[0]).toBe('take_screenshot');
  });

  it('honours limit and category; refuses a bad limit or an unknown argument with a sentence', async () => {
    expect((await search(stdio.client, { query: 'file', limit: 1 })).structuredContent!.tools).toHaveLength(1);
    const github = (await search(stdio.client, { query: 'file', category: 'github', limit: 20 })).structuredContent!.tools;
    expect(github.length).toBeGreaterThan(0);
    expect(github.every((tool) => tool.category.startsWith('github/'))).toBe(true);
    const bad = await search(stdio.client, { query: 'file', limit: 50 });
    expect(bad).toMatchObject({ isError: true, content: [{ text: '"limit" must be a whole number from 1 to 20; got 50.' }] });
    const extra = await search(stdio.client, { query: 'file', top: 3 });
    expect(extra.isError).toBe(true);
    expect(extra.content[0]!.text).toMatch(/does not take "top"/);
    expect((await search(stdio.client, {})).content[0]!.text).toBe('"query" must be a non-empty string, the task in plain words; got nothing.');
  });

  it('twylt_call runs a tool found, through the one call path; an unknown name points to twylt_search', async () => {
    const result = await stdio.client.callTool({ name: 'twylt_call', arguments: { name: 'get_forecast', arguments: { latitude: '48.85', longitude: '2.35' } } });
    expect(result.structuredContent).toEqual({ tool: 'get_forecast', input: { latitude: '48.85', longitude: '2.35' } });
    const invalid = await stdio.client.callTool({ name: 'twylt_call', arguments: { name: 'get_forecast', arguments: { latitude: 5 } } });
    expect(invalid.isError).toBe(true);
    expect((invalid.content as Array<{ text: string }>)[0]!.text).toMatch(/^Invalid arguments for "get_forecast".*\n- \/latitude: must be a string \(got 5\)$/s);
    const unknown = await stdio.client.callTool({ name: 'twylt_call', arguments: { name: 'nope', arguments: {} } });
    expect(unknown).toMatchObject({ isError: true, content: [{ text: 'There is no tool named "nope" in this catalog. Call twylt_search to see the tools and their names.' }] });
  });

  it('--search-model without --search-embeddings, or search flags outside search mode, are usage errors', async () => {
    const { spawnSync } = await import('node:child_process');
    const { BRIDGE_CLI } = await import('../support/mcp.js');
    const alone = spawnSync(process.execPath, [BRIDGE_CLI, '--catalog', 'search', '--search-model', 'm', '--config', config], { encoding: 'utf8' });
    expect(alone.status).toBe(64);
    expect(alone.stderr).toMatch(/--search-model needs --search-embeddings URL/);
    const browse = spawnSync(process.execPath, [BRIDGE_CLI, '--catalog', 'browse', '--search-embeddings', 'http://127.0.0.1:1/v1', '--search-model', 'm', '--config', config], { encoding: 'utf8' });
    expect(browse.status).toBe(64);
    expect(browse.stderr).toMatch(/--search-embeddings needs --catalog search/);
  });
});

describe('search mode over HTTP', () => {
  let http: HttpBridgeProcess;
  beforeAll(async () => {
    http = await startHttpBridge(['--catalog', 'search', '--config', config]);
  }, 60_000);
  afterAll(() => http?.stop());

  it('serves the same two tools and the same ranking, and runs a found tool', async () => {
    const client = await http.connect();
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['twylt_search', 'twylt_call']);
      const over = await client.callTool({ name: 'twylt_search', arguments: { query: 'send a message to the team channel' } });
      const local = await stdio.client.callTool({ name: 'twylt_search', arguments: { query: 'send a message to the team channel' } });
      expect(over.structuredContent).toEqual(local.structuredContent);
      expect(names((over.structuredContent as { tools: Found[] }).tools)[0]).toBe('slack_post_message');
      const call = await client.callTool({ name: 'twylt_call', arguments: { name: 'slack_post_message', arguments: { channel_id: 'C1', text: 'hi' } } });
      expect(call.structuredContent).toEqual({ tool: 'slack_post_message', input: { channel_id: 'C1', text: 'hi' } });
    } finally {
      await client.close();
    }
  });
});

describe('search mode with per-tool scopes', () => {
  let as: AuthServer;
  let bridge: HttpBridgeProcess;
  beforeAll(async () => {
    as = await startAuthServer();
    bridge = await startHttpBridge(['--catalog', 'search', '--auth-issuer', as.issuer, '--auth-scope', 'mcp', '--auth-tool-scopes', '--config', config]);
  }, 60_000);
  afterAll(async () => {
    await bridge?.stop();
    await as?.close();
  });

  async function token(scope: string): Promise<string> {
    const { kid, privateKey } = as.key();
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: as.issuer, aud: bridge.url, sub: 'tester', client_id: 'tester', scope, iat: now, exp: now + 300 })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
      .sign(privateKey);
  }
  async function call(scope: string, name: string, args: Record<string, unknown>) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
    return rawRequest(bridge.url, { headers: { ...MCP_HEADERS, authorization: `Bearer ${await token(scope)}` }, body });
  }

  it('a caller finds only the tools it may call, ranked among them alone', async () => {
    const all = await call('mcp tools:*', 'twylt_search', { query: 'pull request github', limit: 20 });
    expect(names(sseMessages(all.body)[0]!.result.structuredContent.tools)).toContain('create_pull_request');
    const narrow = await call('mcp tools:read_file tools:list_issues', 'twylt_search', { query: 'pull request github', limit: 20 });
    expect(narrow.status).toBe(200);
    const granted = names(sseMessages(narrow.body)[0]!.result.structuredContent.tools);
    expect(granted).toContain('list_issues');
    expect(granted.every((name) => name === 'list_issues' || name === 'read_file')).toBe(true);
  });

  it('twylt_call of a tool the token does not grant is the 403 step-up naming tools:<inner>, as in browse mode', async () => {
    const refused = await call('mcp tools:read_file', 'twylt_call', { name: 'create_pull_request', arguments: {} });
    expect(refused.status).toBe(403);
    expect(String(refused.headers['www-authenticate'])).toMatch(/error="insufficient_scope"/);
    expect(String(refused.headers['www-authenticate'])).toMatch(/scope="mcp tools:create_pull_request tools:read_file"/);
  });
});

/** An OpenAI-compatible /v1/embeddings stub: a vector from the words of each input, or failures on demand. */
function embeddingsStub(): Promise<{ url: string; calls: () => number; mode: (next: 'ok' | 'fail' | 'hang') => void; close: () => Promise<void> }> {
  let mode: 'ok' | 'fail' | 'hang' = 'ok';
  let calls = 0;
  const vocabulary = ['weather', 'forecast', 'rain', 'umbrella', 'slack', 'message', 'pull', 'file'];
  const server: HttpServer = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      calls++;
      if (mode === 'hang') return;
      if (mode === 'fail') return void response.writeHead(500).end('down');
      const { input } = JSON.parse(body) as { input: string[] };
      // "umbrella" means rain: the stub knows what the lexical ranking cannot.
      const has = (text: string, word: string) => text.toLowerCase().includes(word) || (word === 'rain' && /umbrella|forecast/i.test(text));
      // One dimension per word, and a small constant one: no text is the zero vector.
      const vector = (text: string) => [...vocabulary.map((word) => (has(text, word) ? 1 : 0)), 0.1];
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: input.map((text, index) => ({ index, embedding: vector(text) })) }));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}/v1`, calls: () => calls, mode: (next) => (mode = next), close: () => new Promise((done) => server.close(() => done())) });
    }),
  );
}

describe('search mode with an embeddings endpoint', () => {
  it('fuses the endpoint’s ranks, caches tool vectors across a restart, and falls back to lexical (logged, counted) when it fails', async () => {
    const stub = await embeddingsStub();
    const cache = join(dir, 'vectors');
    const args = ['--catalog', 'search', '--search-embeddings', stub.url, '--search-model', 'stub-model', '--search-cache', cache, '--search-timeout-ms', '2000', '--config', config, '--metrics', '127.0.0.1:0'];
    let bridge = await startBridge(args);
    try {
      // Tool vectors are computed at start, then the request's: "umbrella" reaches the forecast.
      const hybrid = await search(bridge.client, { query: 'do I need an umbrella' });
      expect(hybrid.isError).toBeFalsy();
      expect(names(hybrid.structuredContent?.tools)[0]).toBe('get_forecast');
      expect(readdirSync(cache)).toHaveLength(1);
      const callsBefore = stub.calls();
      await bridge.close();
      // A restart asks for the request's vector only.
      bridge = await startBridge(args);
      await search(bridge.client, { query: 'do I need an umbrella' });
      expect(stub.calls() - callsBefore).toBe(1);

      stub.mode('fail');
      const failed = await search(bridge.client, { query: 'post to slack' });
      expect(failed.isError).toBeFalsy();
      expect(names(failed.structuredContent?.tools)[0]).toBe('slack_post_message');
      stub.mode('hang');
      const started = performance.now();
      const slow = await search(bridge.client, { query: 'post to slack' });
      // Answered at the time-out (2 s, roomy for a loaded machine), not when the endpoint would.
      expect(performance.now() - started).toBeLessThan(8000);
      expect(names(slow.structuredContent?.tools)[0]).toBe('slack_post_message');
      expect(bridge.stderr()).toMatch(/search: embeddings error \(the embeddings endpoint answered HTTP 500\); lexical results given/);
      expect(bridge.stderr()).toMatch(/search: embeddings timeout \(the embeddings endpoint did not answer within 2000 ms\); lexical results given/);
      const metricsUrl = /metrics at (http:\S+)/.exec(bridge.stderr())![1]!;
      const metrics = await (await fetch(metricsUrl)).text();
      expect(metrics).toMatch(/^twylt_search_fallbacks_total\{reason="error"\} 1$/m);
      expect(metrics).toMatch(/^twylt_search_fallbacks_total\{reason="timeout"\} 1$/m);
      expect(metrics).toMatch(/^twylt_search_duration_seconds_count\{ranking="hybrid"\} 1$/m);
      expect(metrics).toMatch(/^twylt_search_duration_seconds_count\{ranking="lexical"\} 2$/m);
      expect(metrics).toMatch(/^twylt_search_results_sum\{ranking="hybrid"\} 5$/m);
    } finally {
      await bridge.close();
      await stub.close();
    }
  }, 60_000);
});
