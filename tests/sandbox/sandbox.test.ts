/**
 * The sandbox with everything that exists (issue 28): an allowed host through the proxy
 * (plain HTTP and CONNECT), warm processes started inside their sandbox, a time-out that
 * ends the whole sandbox, refusals published on the diagnostics channel, and a refusal to
 * start without a working bwrap. Driven through the built client and toolset in this process.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_SKIP_REASON } from './support.js';

const dist = new URL('../../packages/twylt/dist/', import.meta.url);
const { TwyltClient, ResourceLimitError, TimeoutError, ToolError } = await import(new URL('client/index.js', dist).href);
const { WarmCap, WarmPool, prepareSandbox } = await import(new URL('toolset/index.js', dist).href);
const HOSTILE = fileURLToPath(new URL('../fixtures/sandbox/hostile.mjs', import.meta.url));

const scratch = mkdtempSync(join(tmpdir(), 'twylt-sandbox-unit-'));
const workspace = join(scratch, 'workspace');
let web: HttpServer;
let webPort = 0;
let tcp: Server;
let tcpPort = 0;

function listen(server: Server | HttpServer): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

beforeAll(async () => {
  mkdirSync(workspace);
  web = createHttpServer((req, res) => res.end(`served ${req.url}`));
  tcp = createServer((socket) => socket.end('hello through the tunnel\n'));
  webPort = await listen(web);
  tcpPort = await listen(tcp);
});
afterAll(() => {
  web?.close();
  tcp?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe.skipIf(SANDBOX_SKIP_REASON !== undefined)(`the sandbox with everything${SANDBOX_SKIP_REASON ? ` (skipped: ${SANDBOX_SKIP_REASON})` : ''}`, () => {
  it('an allowed host is reachable through the proxy, a plain http:// request and a CONNECT tunnel alike; another port of the same host is refused (403)', async () => {
    const sandbox = await prepareSandbox({ allowNet: [`127.0.0.1:${webPort}`, `127.0.0.1:${tcpPort}`] });
    try {
      const client = new TwyltClient([process.execPath, HOSTILE], { cwd: workspace, sandbox: sandbox.forTool({ workspace }) });
      const http = await client.call({ attempt: 'http', url: `http://127.0.0.1:${webPort}/page?q=1` }, { validate: false });
      expect(http.output).toEqual({ result: 'served /page?q=1' });
      const tunnel = await client.call({ attempt: 'tunnel', port: tcpPort }, { validate: false });
      expect(tunnel.output).toEqual({ result: 'hello through the tunnel' });
      const other = await client.call({ attempt: 'http', url: `http://127.0.0.1:${tcpPort + 1}/` }, { validate: false }).catch((error: Error) => error);
      expect(other).toBeInstanceOf(ToolError);
      expect((other as Error).message).toContain('HTTP 403');
      // The guardrails switch of an entry that declares it: no proxy for that tool at all.
      const offline = new TwyltClient([process.execPath, HOSTILE], { cwd: workspace, env: { TWYLT_DISABLE_NETWORK: '1' }, sandbox: sandbox.forTool({ workspace }) });
      const refused = await offline.call({ attempt: 'http', url: `http://127.0.0.1:${webPort}/` }, { validate: false }).catch((error: Error) => error);
      expect(refused).toBeInstanceOf(ToolError);
      expect((refused as Error).message).not.toContain('HTTP 403');
    } finally {
      await sandbox.close();
    }
  }, 120_000);

  it('warm processes start inside their sandbox: a warm call is sandboxed like a cold one', async () => {
    const sandbox = await prepareSandbox(true);
    const launcher = sandbox.forTool({ workspace });
    const command = [process.execPath, HOSTILE];
    const pool = new WarmPool({ size: 1, command, cwd: workspace, env: {}, cap: new WarmCap(2), idleMs: 60_000, sandbox: launcher });
    try {
      const client = new TwyltClient(command, { cwd: workspace, sandbox: launcher });
      await new Promise((resolve) => setTimeout(resolve, 500));
      const [warmPid] = pool.pids;
      expect(warmPid).toBeGreaterThan(0);
      // The waiting process is the sandbox's launcher, not the tool itself.
      expect(readFileSync(`/proc/${warmPid}/cmdline`, 'utf8')).toContain('bwrap');
      const answer = await client.call({ attempt: 'tmp_get', name: 'nothing' }, { validate: false, warm: pool }).catch((error: Error) => error);
      expect(answer).toBeInstanceOf(ToolError);
      const own = await client.call({ attempt: 'read', path: '/proc/1/cmdline' }, { validate: false, warm: pool });
      // In its own pid namespace, process 1 is the sandbox's init (bwrap), not the machine's.
      expect(String((own.output as { result: string }).result)).toContain('bwrap');
    } finally {
      pool.close();
      await sandbox.close();
    }
  }, 120_000);

  it('a time-out ends the whole sandbox: what the tool started never writes afterwards', async () => {
    const sandbox = await prepareSandbox(true);
    try {
      const client = new TwyltClient([process.execPath, HOSTILE], { cwd: workspace, sandbox: sandbox.forTool({ workspace }), timeoutMs: 1500 });
      const late = join(workspace, 'after-timeout.txt');
      const error = await client.call({ attempt: 'linger_then_hang', path: late }, { validate: false }).catch((caught: Error) => caught);
      expect(error).toBeInstanceOf(TimeoutError);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(existsSync(late)).toBe(false);
    } finally {
      await sandbox.close();
    }
  }, 120_000);

  it('a limit hit is published on twylt:sandbox:refusal, and so is a host the proxy refuses, each with the tool\'s name', async () => {
    const seen: unknown[] = [];
    const listener = (message: unknown) => seen.push(message);
    subscribe('twylt:sandbox:refusal', listener);
    const sandbox = await prepareSandbox({ memoryMb: 96, allowNet: ['example.invalid'] });
    try {
      const client = new TwyltClient([process.execPath, HOSTILE], { cwd: workspace, sandbox: sandbox.forTool({ workspace, name: 'hostile' }) });
      const error = await client.call({ attempt: 'memory_bomb', mb: 300 }, { validate: false }).catch((caught: Error) => caught);
      expect(error).toBeInstanceOf(ResourceLimitError);
      await client.call({ attempt: 'http', url: `http://127.0.0.1:${webPort}/` }, { validate: false }).catch(() => {});
      expect(seen).toEqual([
        { reason: 'memory', tool: 'hostile' },
        { reason: 'network', tool: 'hostile', host: '127.0.0.1' },
      ]);
    } finally {
      unsubscribe('twylt:sandbox:refusal', listener);
      await sandbox.close();
    }
  }, 120_000);

  it('without a working bwrap, prepareSandbox refuses: SandboxUnavailableError, nothing started', async () => {
    const error = await prepareSandbox(true, { bwrap: join(scratch, 'no-bwrap') }).catch((caught: Error) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe('SandboxUnavailableError');
    expect((error as Error).message).toMatch(/cannot make a sandbox here: .*refusing to run tools unsandboxed/);
  });

  it('a workspace holding the home folder is refused, never mounted', async () => {
    const sandbox = await prepareSandbox(true);
    try {
      const client = new TwyltClient([process.execPath, HOSTILE], { cwd: workspace, sandbox: sandbox.forTool({ workspace: '/' }) });
      const error = await client.call({ attempt: 'ping' }, { validate: false }).catch((caught: Error) => caught);
      expect((error as Error).message).toContain('the sandbox refuses to expose /');
    } finally {
      await sandbox.close();
    }
  });
});
