/**
 * The access checks every consumer server makes, on a real node:http server on 127.0.0.1:
 * a foreign Host or Origin gets 403, a missing or wrong token 401, and the handler behind
 * the checks never runs for them.
 */
import { createServer, request, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BodyTooLargeError,
  assertSafeBind,
  checkAccess,
  createToken,
  hostsFor,
  isLoopback,
  listen,
  originsFor,
  parseListenAddress,
  readBody,
  type AccessPolicy,
} from '../../packages/twylt/src/server/index.js';

let server: Server;
let port: number;
let handled = 0;
let policy: AccessPolicy;
const token = createToken();

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let refusal;
    try {
      refusal = checkAccess(req, policy);
    } catch (error) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
      return;
    }
    if (refusal) {
      res.writeHead(refusal.status, { 'content-type': 'text/plain' }).end(refusal.reason);
      return;
    }
    handled++;
    try {
      res.end(`got ${(await readBody(req, 64)).length} bytes`);
    } catch (error) {
      res.writeHead(error instanceof BodyTooLargeError ? 413 : 500).end((error as Error).message);
    }
  });
  ({ port } = await listen(server, '127.0.0.1', 0));
  const hosts = hostsFor('127.0.0.1', port);
  policy = { hosts, origins: originsFor(hosts), token, tokenCookie: 'twylt_token', tokenQuery: 'token' };
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function send(options: { path?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: options.path ?? '/', method: options.body === undefined ? 'GET' : 'POST', headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('checkAccess on a live server', () => {
  it('lets a request with the token in any allowed place through', async () => {
    const before = handled;
    expect((await send({ headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await send({ headers: { cookie: `other=1; twylt_token=${token}` } })).status).toBe(200);
    expect((await send({ path: `/?token=${token}` })).status).toBe(200);
    expect((await send({ headers: { authorization: `Bearer ${token}`, host: `localhost:${port}`, origin: `http://localhost:${port}` } })).status).toBe(200);
    expect(handled).toBe(before + 4);
  });

  it('refuses a missing or wrong token with 401, a foreign Host or Origin with 403, and runs nothing', async () => {
    const before = handled;
    expect(await send({})).toEqual({ status: 401, body: 'a valid token is required' });
    expect((await send({ headers: { authorization: `Bearer ${token}x` } })).status).toBe(401);
    expect((await send({ path: '/?token=' })).status).toBe(401);
    expect(await send({ headers: { authorization: `Bearer ${token}`, host: `attacker.example:${port}` } })).toEqual({
      status: 403,
      body: `Host "attacker.example:${port}" is not one of this server's names`,
    });
    expect((await send({ headers: { authorization: `Bearer ${token}`, host: `127.0.0.1:${port + 1}` } })).status).toBe(403);
    expect((await send({ headers: { authorization: `Bearer ${token}`, origin: 'https://evil.example' } })).status).toBe(403);
    expect((await send({ headers: { authorization: `Bearer ${token}`, origin: 'null' } })).status).toBe(403);
    expect(handled).toBe(before);
  });

  it("decodes only its own cookie: other applications' malformed cookies are ignored, a malformed one of ours is no token", async () => {
    const before = handled;
    expect((await send({ headers: { cookie: `other=%zz; discount=50%; twylt_token=${token}` } })).status).toBe(200);
    expect(await send({ headers: { cookie: 'twylt_token=%zz; other=1' } })).toEqual({ status: 401, body: 'a valid token is required' });
    expect(handled).toBe(before + 1);
  });

  it('stops reading a body at its limit, declared or sent chunked, and the answer still arrives', async () => {
    const auth = { authorization: `Bearer ${token}` };
    expect(await send({ headers: auth, body: 'x'.repeat(64) })).toEqual({ status: 200, body: 'got 64 bytes' });
    expect(await send({ headers: auth, body: 'x'.repeat(65) })).toEqual({ status: 413, body: 'the request body is larger than 64 bytes' });
    const chunked = { ...auth, 'transfer-encoding': 'chunked' };
    expect(await send({ headers: chunked, body: 'x'.repeat(64) })).toEqual({ status: 200, body: 'got 64 bytes' });
    expect(await send({ headers: chunked, body: 'x'.repeat(100_000) })).toEqual({ status: 413, body: 'the request body is larger than 64 bytes' });
  });
});

describe('binding', () => {
  it('knows the loopback names', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', 'app.localhost', '::1', '[::1]']) expect(isLoopback(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.com', '128.0.0.1']) expect(isLoopback(host), host).toBe(false);
  });

  it('names a loopback server by every loopback name, and another by its own and the extra ones', () => {
    expect(hostsFor('127.0.0.1', 80)).toEqual(['127.0.0.1:80', 'localhost:80', '[::1]:80']);
    expect(hostsFor('0.0.0.0', 80, ['tools.example', 'lb.example:443', '::1'])).toEqual(['0.0.0.0:80', 'tools.example:80', 'lb.example:443', '[::1]:80']);
  });

  it('parses [HOST:]PORT', () => {
    expect(parseListenAddress('0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseListenAddress('0.0.0.0:8080')).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(parseListenAddress('[::1]:9')).toEqual({ host: '::1', port: 9 });
    for (const wrong of ['', 'x', '70000', 'host:', ':80x']) expect(() => parseListenAddress(wrong), wrong).toThrow(RangeError);
  });

  it('refuses to listen beyond this machine without a token', () => {
    expect(() => assertSafeBind('0.0.0.0', false, 'set TWYLT_MCP_TOKEN')).toThrow('refusing to listen on 0.0.0.0 without a token: anyone who can reach it could run the tools; set TWYLT_MCP_TOKEN');
    expect(() => assertSafeBind('0.0.0.0', true, '')).not.toThrow();
    expect(() => assertSafeBind('127.0.0.1', false, '')).not.toThrow();
  });
});
