/**
 * `twylt inspect` at the edges a review of the servers found (issue 24): other applications'
 * malformed cookies, the page's credential kept from other servers on 127.0.0.1 (in
 * Chromium), describes and reloads under the call cap and stopped when their page goes
 * away, an oversized body sent chunked, and a dozen tools started without a warning.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRunning, waitFor } from '../support/mcp.js';
import { repoRoot } from '../support/twylt-cli.js';
import { NO_CHROMIUM_REASON, launchChromium, noChromium, send, startInspect, type Inspect } from './support.js';

const SLOW = ['node', join(repoRoot, 'tests/inspect/fixtures/slow-describe.mjs')];
/** MAX_RUNNING_CALLS of packages/twylt/src/inspect/server.ts. */
const CAP = 16;
const dir = mkdtempSync(join(tmpdir(), 'twylt-inspect-hardening-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A request as a script makes it: the token as a Bearer header. */
const api = (inspect: Inspect, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}) =>
  send(inspect.port, {
    method: options.body === undefined ? 'GET' : 'POST',
    path,
    headers: { authorization: `Bearer ${inspect.token}`, ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });

/** A slow-describe tool whose describes wait from now on, counted in `<slowDir>/started`. */
function slowDir(name: string): { path: string; started: () => number[]; slow: () => void; release: () => void } {
  const path = join(dir, name);
  mkdirSync(path, { recursive: true });
  const started = () => (existsSync(join(path, 'started')) ? readdirSync(join(path, 'started')).map(Number) : []);
  return { path, started, slow: () => writeFileSync(join(path, 'slow'), ''), release: () => writeFileSync(join(path, 'release'), '') };
}

describe('requests the server must answer calmly', () => {
  let inspect: Inspect;
  beforeAll(async () => {
    inspect = await startInspect(['--', ...SLOW]);
  });
  afterAll(() => inspect?.stop());

  it("ignores another application's malformed cookies: the page and the API answer, nothing is logged", async () => {
    const cookie = 'other=%zz; discount=50%; twylt_note=%E0%A4%A';
    const link = new URL(inspect.url);
    const page = await send(inspect.port, { path: `${link.pathname}${link.search}`, headers: { cookie } });
    expect(page.status).toBe(200);
    expect((await api(inspect, '/api/tools', { headers: { cookie } })).status).toBe(200);
    expect(inspect.stderr()).not.toMatch(/URIError|error in GET/);
  });

  it('answers a body over 16 MiB sent chunked (no Content-Length) with 413, and goes on', async () => {
    const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: inspect.port, method: 'POST', path: '/api/call', headers: { host: `127.0.0.1:${inspect.port}`, authorization: `Bearer ${inspect.token}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
        (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        },
      );
      req.on('error', reject);
      req.end(Buffer.alloc(17 * 1024 * 1024, 0x20));
    });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body)).toEqual({ error: `the request body is larger than ${16 * 1024 * 1024} bytes` });
    expect((await api(inspect, '/api/tools')).status).toBe(200);
  });
});

describe('describes and reloads run under the call cap', () => {
  it(`start at most ${CAP} tools at once however many are asked for; a reload beyond the cap is refused (429)`, async () => {
    const slow = slowDir('cap');
    const inspect = await startInspect(['--', ...SLOW], { SLOW_DIR: slow.path });
    try {
      slow.slow();
      const replies = Array.from({ length: 40 }, () => api(inspect, '/api/describe', { body: { tool: 'slow_describe', mode: 'json_spec' } }));
      const statuses: number[] = [];
      for (const reply of replies) reply.then(({ status }) => statuses.push(status), () => statuses.push(0));
      await waitFor(() => statuses.length === 40 - CAP, `${40 - CAP} describes to be refused`, 20_000);
      expect(statuses.every((status) => status === 429)).toBe(true);
      await waitFor(() => slow.started().length === CAP, `${CAP} describes to start`, 20_000);
      const reload = await api(inspect, '/api/reload', { body: {} });
      expect(reload.status).toBe(429);
      expect(slow.started()).toHaveLength(CAP);
      slow.release();
      expect((await Promise.all(replies)).filter((reply) => reply.status === 200)).toHaveLength(CAP);
    } finally {
      slow.release();
      await inspect.stop();
    }
  });

  it('kills the tool of a describe or a reload whose page went away', async () => {
    const slow = slowDir('abandoned');
    const inspect = await startInspect(['--', ...SLOW], { SLOW_DIR: slow.path });
    try {
      slow.slow();
      for (const [path, body] of [
        ['/api/describe', { tool: 'slow_describe', mode: 'json_spec' }],
        ['/api/reload', {}],
      ] as const) {
        const before = slow.started();
        const req = request({ host: '127.0.0.1', port: inspect.port, method: 'POST', path, headers: { host: `127.0.0.1:${inspect.port}`, authorization: `Bearer ${inspect.token}`, 'content-type': 'application/json' } });
        req.on('error', () => {});
        req.end(JSON.stringify(body));
        await waitFor(() => slow.started().length > before.length, `the ${path} tool to start`, 20_000);
        const pid = slow.started().find((started) => !before.includes(started))!;
        req.destroy();
        await waitFor(() => !isRunning(pid), `the abandoned ${path} tool (${pid}) to be killed`, 20_000);
      }
    } finally {
      slow.release();
      await inspect.stop();
    }
  });
});

describe('a dozen tools', () => {
  it('start without a MaxListenersExceededWarning', async () => {
    const config = join(dir, 'twelve.json');
    writeFileSync(config, JSON.stringify({ tools: Array.from({ length: 12 }, (_, at) => ({ command: SLOW, name: `tool_${at}` })) }));
    const inspect = await startInspect(['--config', config]);
    const { stderr } = await inspect.stop();
    expect(stderr).toContain('12 tools: tool_0, tool_1');
    expect(stderr).not.toContain('MaxListenersExceededWarning');
    expect(stderr).not.toMatch(/\(node:\d+\)/);
  });
});

describe.skipIf(noChromium)(`the page's credential in Chromium${noChromium ? ` (${NO_CHROMIUM_REASON})` : ''}`, () => {
  it('never reaches another server on 127.0.0.1: no cookie, no Authorization, in any request to another port', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const other = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>another app</title><img src="/pixel.png">');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}/`;
    const inspect = await startInspect(['--', ...SLOW]);
    const browser = await launchChromium();
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(inspect.url);
      await page.getByRole('navigation', { name: 'Tools' }).getByRole('button').first().waitFor();
      // The page works (its API requests carry the credential) and its address holds none.
      expect(page.url()).toBe(`${inspect.origin}/`);
      await page.reload();
      await page.getByRole('navigation', { name: 'Tools' }).getByRole('button').first().waitFor();

      const elsewhere = await context.newPage();
      await elsewhere.goto(otherUrl);
      await waitFor(() => seen.length >= 2, 'the other server to see its page and its image');
      await page.goto(otherUrl);
      expect(seen.length).toBeGreaterThanOrEqual(3);
      for (const headers of seen) {
        expect(headers.cookie).toBeUndefined();
        expect(headers.authorization).toBeUndefined();
        expect(JSON.stringify(headers)).not.toContain(inspect.token);
      }
      expect(await context.cookies()).toEqual([]);
    } finally {
      await browser.close();
      await inspect.stop();
      other.close();
    }
  });
});
