/**
 * The network policy of each tool (ADR 0032): a tool reaches the hosts of its own merged
 * policy, through a proxy of its own, and no host allowed only to another tool of the same
 * consumer. Two HTTP servers on 127.0.0.1 (A and B, told apart by port) and one fetching
 * tool served three times: allowed A, allowed B, allowed nothing. Through the real
 * `twylt-mcp` with a config file, and through the toolset's prepareSandbox in this process.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, startInspect } from '../inspect/support.js';
import { bundleTool } from '../support/bundle-tool.js';
import { startBridge, textOf } from '../support/mcp.js';
import { ROOT } from '../support/process.js';
import { SANDBOX_SKIP_REASON } from './support.js';

const dist = new URL('../../packages/twylt/dist/', import.meta.url);
const scratch = mkdtempSync(join(tmpdir(), 'twylt-sandbox-net-'));
const servers: Server[] = [];
let portA = 0;
let portB = 0;
let tool: string[];

function serve(name: string): Promise<number> {
  const server = createServer((_req, res) => res.end(`served by ${name}`));
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

beforeAll(async () => {
  portA = await serve('A');
  portB = await serve('B');
  mkdirSync(join(scratch, 'built'));
  tool = [process.execPath, await bundleTool(join(ROOT, 'tests/fixtures/sandbox/fetch_url.ts'), join(scratch, 'built'))];
});
afterAll(() => {
  for (const server of servers) server.close();
  rmSync(scratch, { recursive: true, force: true });
});

interface Fetched {
  status: number;
  body: string;
  proxied: boolean;
}

/** A config file serving the tool three times: allowed A, allowed B, allowed nothing. */
function writeConfig(): string {
  const config = join(scratch, 'tools.json');
  writeFileSync(
    config,
    JSON.stringify({
      tools: [
        { command: tool, name: 'fetch_a', cwd: scratch, sandbox: { allowNet: [`127.0.0.1:${portA}`] } },
        { command: tool, name: 'fetch_b', cwd: scratch, sandbox: { allowNet: [`127.0.0.1:${portB}`] } },
        { command: tool, name: 'fetch_none', cwd: scratch, sandbox: true },
      ],
    }),
  );
  return config;
}

describe.skipIf(SANDBOX_SKIP_REASON !== undefined)(`each tool's own allowNet${SANDBOX_SKIP_REASON ? ` (skipped: ${SANDBOX_SKIP_REASON})` : ''}`, () => {
  it('twylt-mcp with a config file: each tool reaches its own host and is refused (403) the other\'s; a tool allowed none reaches neither and has no proxy', async () => {
    const bridge = await startBridge(['--config', writeConfig()]);
    const fetch = async (name: string, port: number) => {
      const result = await bridge.client.callTool({ name, arguments: { url: `http://127.0.0.1:${port}/` } });
      return { isError: result.isError === true, text: result.isError ? JSON.stringify(result.content) : textOf(result) };
    };
    const fetched = async (name: string, port: number) => {
      const { isError, text } = await fetch(name, port);
      expect(isError, text).toBe(false);
      return JSON.parse(text) as Fetched;
    };
    try {
      expect(await fetched('fetch_a', portA)).toEqual({ status: 200, body: 'served by A', proxied: true });
      expect(await fetched('fetch_a', portB)).toMatchObject({ status: 403, body: expect.stringContaining('not an allowed host') });
      expect(await fetched('fetch_b', portB)).toEqual({ status: 200, body: 'served by B', proxied: true });
      expect(await fetched('fetch_b', portA)).toMatchObject({ status: 403 });
      // No HTTP_PROXY: it connects straight to the host, and its sandbox has no network.
      for (const port of [portA, portB]) {
        const none = await fetch('fetch_none', port);
        expect(none.isError, none.text).toBe(true);
        expect(none.text).toContain('ECONNREFUSED');
      }
    } finally {
      await bridge.close();
    }
  }, 240_000);

  it("twylt inspect with the same config file: the page's calls reach the same hosts, and no others", async () => {
    const inspect = await startInspect(['--config', writeConfig()]);
    const call = async (name: string, port: number) => {
      const reply = await send(inspect.port, {
        method: 'POST',
        path: '/api/call',
        headers: { authorization: `Bearer ${inspect.token}`, 'content-type': 'application/json', origin: inspect.origin },
        body: JSON.stringify({ tool: name, input: { url: `http://127.0.0.1:${port}/` } }),
      });
      expect(reply.status, reply.body).toBe(200);
      const answer = JSON.parse(reply.body) as { ok: boolean; output?: { text: string }; error?: unknown };
      return { ok: answer.ok, fetched: answer.output && (JSON.parse(answer.output.text) as Fetched), error: answer.error };
    };
    try {
      expect(await call('fetch_a', portA)).toMatchObject({ ok: true, fetched: { status: 200, body: 'served by A' } });
      expect(await call('fetch_a', portB)).toMatchObject({ ok: true, fetched: { status: 403 } });
      expect(await call('fetch_b', portB)).toMatchObject({ ok: true, fetched: { status: 200, body: 'served by B' } });
      const none = await call('fetch_none', portA);
      expect(none.ok).toBe(false);
      expect(JSON.stringify(none.error)).toContain('ECONNREFUSED');
    } finally {
      await inspect.stop();
    }
  }, 240_000);

  it('prepareSandbox: hosts of the consumer go to every tool, a tool\'s own only to it; its refusals name it; close() stops every proxy', async () => {
    const { TwyltClient } = await import(new URL('client/index.js', dist).href);
    const { prepareSandbox } = await import(new URL('toolset/index.js', dist).href);
    const proxies = join(scratch, 'proxies');
    mkdirSync(proxies);
    const seen: unknown[] = [];
    const listener = (message: unknown) => seen.push(message);
    subscribe('twylt:sandbox:refusal', listener);
    // Where the proxies put their sockets, counted below.
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = proxies;
    const sandbox = await prepareSandbox({ allowNet: [`127.0.0.1:${portA}`] });
    try {
      const clientOf = (name: string, allowNet?: string[]) =>
        new TwyltClient(tool, { cwd: scratch, sandbox: sandbox.forTool({ workspace: scratch, name, ...(allowNet ? { policy: { allowNet } } : {}) }) });
      const call = async (client: { call: (input: unknown) => Promise<{ output: Fetched }> }, port: number) =>
        (await client.call({ url: `http://127.0.0.1:${port}/` })).output;
      const plain = clientOf('plain');
      const more = clientOf('more', [`127.0.0.1:${portB}`]);
      expect(await call(plain, portA)).toMatchObject({ status: 200, body: 'served by A' });
      expect(await call(plain, portB)).toMatchObject({ status: 403 });
      expect(await call(more, portA)).toMatchObject({ status: 200, body: 'served by A' });
      expect(await call(more, portB)).toMatchObject({ status: 200, body: 'served by B' });
      expect(seen).toEqual([{ reason: 'network', tool: 'plain', host: '127.0.0.1' }]);
      expect(readdirSync(proxies).filter((name) => name.startsWith('twylt-proxy-'))).toHaveLength(2);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      unsubscribe('twylt:sandbox:refusal', listener);
      await sandbox.close();
    }
    expect(readdirSync(proxies).filter((name) => name.startsWith('twylt-proxy-'))).toEqual([]);
  }, 240_000);
});
