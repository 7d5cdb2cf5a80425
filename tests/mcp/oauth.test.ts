/**
 * `twylt-mcp --http --auth-issuer URL`, the real command, as an OAuth 2.1 resource server of
 * a real authorization server started here (oidc-provider on 127.0.0.1, resource indicators,
 * JWT access tokens): Protected Resource Metadata without a token; client credentials;
 * every kind of bad token refused with the right status and WWW-Authenticate header while
 * no tool starts (the sleeper fixture appends a line to a file at each start); per-tool
 * scopes in tools/list and tools/call; opaque tokens by introspection; key rotation and
 * rate-limited key refetches; the MCP SDK's own OAuth client through the authorization-code
 * flow with PKCE and refresh tokens, step-up included; and the call log, which names the
 * caller, never the token. Then the refusals of ADR 0036: sender-constrained tokens, the
 * request's id in every refusal, tool names from the caller never echoed into a header,
 * per-tool scopes in browse mode, revoked JWTs by introspection, and a broken introspection
 * set-up as a 503 at run time and a start-up error.
 */
import { createPublicKey } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { STATUS_CODES, createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { SignJWT, base64url, generateKeyPair, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blocksUnder, readDoc } from '../docs/markdown.js';
import { CLIENTS, REDIRECT_URI, startAuthServer, type AuthServer } from '../support/auth-server.js';
import { BRIDGE_CLI, SLEEPER, bridgeEnv, waitFor } from '../support/mcp.js';
import { MCP_HEADERS, lineCount, rawRequest, sseMessages, startHttpBridge, toolsCall, type HttpBridgeProcess } from '../support/mcp-http.js';
import { example, run } from '../support/process.js';

const ECHO = example('echo');
/** Short, so that the rotation test does not wait long; the rate-limit test allows for it. */
const COOLDOWN_MS = 2000;
const dir = mkdtempSync(join(tmpdir(), 'twylt-mcp-oauth-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tools = (...commands: ReadonlyArray<readonly string[]>) => commands.flatMap((command) => ['--', ...command]);
const now = () => Math.floor(Date.now() / 1000);

let as: AuthServer;
let bridge: HttpBridgeProcess;
/** The sleeper's starts, one line each (the describe at start-up included). */
const starts = join(dir, 'sleeper-starts.log');
/** Every token handed to the bridge, so that the log can be searched for them. */
const tokensSeen: string[] = [];

beforeAll(async () => {
  as = await startAuthServer();
  const clientFile = join(dir, 'introspector.json');
  writeFileSync(clientFile, JSON.stringify({ client_id: CLIENTS.introspector.id, client_secret: CLIENTS.introspector.secret }));
  bridge = await startHttpBridge(
    [
      '--auth-issuer', as.issuer,
      '--auth-scope', 'mcp',
      '--auth-tool-scopes',
      '--auth-introspection', `${as.issuer}/token/introspection`,
      '--auth-client-file', clientFile,
      '--auth-jwks-cooldown-ms', String(COOLDOWN_MS),
      ...tools(ECHO, SLEEPER),
    ],
    { SLEEPER_LOG: starts },
  );
}, 60_000);
afterAll(async () => {
  await bridge?.stop();
  await as?.close();
});

/** A token of the `machine` client for the bridge, with these scopes. */
async function machineToken(scope: string, resource = bridge.url): Promise<string> {
  const token = await as.clientCredentials(CLIENTS.machine, resource, scope);
  tokensSeen.push(token);
  return token;
}

/** A token made here: the good claims, with `claims` and `header` changed, signed with `key` (default: the server's own key). */
async function forged(claims: Record<string, unknown>, options: { key?: CryptoKey | Uint8Array; alg?: string; kid?: string } = {}): Promise<string> {
  const { kid, privateKey } = as.key();
  const good = { iss: as.issuer, aud: bridge.url, sub: 'forger', client_id: 'forger', scope: 'mcp tools:*', iat: now(), exp: now() + 300 };
  const token = await new SignJWT({ ...good, ...claims })
    .setProtectedHeader({ alg: options.alg ?? 'ES256', kid: options.kid ?? kid, typ: 'at+jwt' })
    .sign(options.key ?? privateKey);
  tokensSeen.push(token);
  return token;
}

/** A raw tools/call of the sleeper with `token`. */
function callSleeper(token: string | undefined) {
  return callTool(bridge.url, token, 'sleeper', { action: 'wait' });
}

/** A raw tools/call of `name` at `url` with `token`, with the JSON-RPC id `id`. */
function callTool(url: string, token: string | undefined, name: string, args: Record<string, unknown>, id: number | string = 1) {
  const headers: Record<string, string> = { ...MCP_HEADERS, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) };
  return rawRequest(url, { headers, body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }) });
}

/** The scopes the 401 of the main bridge asks a client to sign in for: the required one and every tool's. */
const SIGN_IN_SCOPE = 'mcp tools:* tools:echo tools:sleeper';
/** The proof algorithms of the DPoP challenge. */
const DPOP_ALGS = 'ES256 ES384 ES512 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA Ed25519';

/** `Bearer k1="v1", k2="v2"` as a map. */
function challengeOf(header: string | string[] | undefined): Record<string, string> {
  const text = String(header ?? '');
  expect(text).toMatch(/^Bearer /);
  return Object.fromEntries([...text.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1]!, match[2]!]));
}

const metadataUrl = () => `${bridge.base}/.well-known/oauth-protected-resource/mcp`;

/** The plain blocks of docs/mcp.md's "Behind your identity provider", which show what the bridge sends and prints. */
const docBlocks = () => blocksUnder(readDoc('docs/mcp.md'), 'Behind your identity provider', '').map((block) => block.body);
/** The docs' example names made this test's: the issuer, the resource, the tool `search` (here the sleeper). */
const asHere = (text: string) =>
  text
    .replaceAll('https://mcp.example.com/.well-known/oauth-protected-resource/mcp', metadataUrl())
    .replaceAll('https://sso.example.com', as.issuer)
    .replaceAll('tools:search', 'tools:sleeper');

describe('Protected Resource Metadata', () => {
  it('is served at both well-known paths, without a token, to any page', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const answer = await rawRequest(`${bridge.base}${path}`, { method: 'GET', headers: { origin: 'https://inspector.example' } });
      expect(answer.status).toBe(200);
      expect(answer.headers['access-control-allow-origin']).toBe('*');
      expect(JSON.parse(answer.body)).toEqual({
        resource: bridge.url,
        authorization_servers: [as.issuer],
        scopes_supported: ['mcp', 'tools:*', 'tools:echo', 'tools:sleeper'],
        bearer_methods_supported: ['header'],
        dpop_signing_alg_values_supported: ['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA', 'Ed25519'],
        resource_name: 'twylt-mcp',
      });
    }
  });
});

describe('tokens refused, and nothing runs', () => {
  it('no token: 401 pointing to the metadata, with every scope a client may need and no error code, under the request’s id', async () => {
    const before = lineCount(starts);
    const answer = await callSleeper(undefined);
    expect(answer.status).toBe(401);
    // The required scope and each tool's, so that a first sign-in asks for all (ADR 0036).
    // Then a DPoP challenge: a client that can bind its tokens to a key may (RFC 9449).
    expect(challengeOf(answer.headers['www-authenticate'])).toEqual({ resource_metadata: metadataUrl(), scope: SIGN_IN_SCOPE, algs: DPOP_ALGS });
    expect(answer.headers['www-authenticate']).toMatch(/", DPoP algs="/);
    expect(JSON.parse(answer.body)).toMatchObject({ id: 1, error: { code: -32000 } });
    const named = await callTool(bridge.url, undefined, 'sleeper', {}, 'call-7');
    expect(JSON.parse(named.body).id).toBe('call-7');
    expect(lineCount(starts)).toBe(before);
  });

  it('a forged token with every claim right is accepted (the refusals below each change one thing)', async () => {
    const before = lineCount(starts);
    const answer = await callSleeper(await forged({}));
    expect(answer.status).toBe(200);
    expect(sseMessages(answer.body)[0]!.result.isError).toBeFalsy();
    expect(lineCount(starts)).toBe(before + 1);
  });

  const invalid: Array<[string, () => Promise<string>, RegExp]> = [
    ['a real token for another resource (wrong audience)', () => machineToken('mcp tools:*', 'http://127.0.0.1:1/mcp'), /"aud"/],
    ['expired, beyond the leeway', () => forged({ iat: now() - 600, exp: now() - 120 }), /"exp"/],
    ['not yet valid, beyond the leeway', () => forged({ nbf: now() + 300 }), /"nbf"/],
    ['another issuer', () => forged({ iss: 'http://127.0.0.1:1' }), /"iss"/],
    ['alg none', async () => unsigned(await forged({})), /alg/i],
    ['HMAC-signed with the public key as the secret', () => forged({}, { alg: 'HS256', key: new TextEncoder().encode(publicPem()) }), /alg/i],
    ['a token the issuer never issued (opaque, inactive at introspection)', async () => 'made-up-opaque-token-0123456789', /not active/],
    // Bound to a key (DPoP, RFC 9449): a bearer of it proves nothing, so it is refused; with a proof, tests/mcp/oauth-dpop.test.ts.
    ['sender-constrained (cnf.jkt), sent as a bearer token', () => forged({ cnf: { jkt: '0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I' } }), /DPoP-bound token .* DPoP scheme/],
  ];
  for (const [what, make, reason] of invalid) {
    it(`${what}: 401 invalid_token`, async () => {
      const token = await make();
      const before = lineCount(starts);
      const answer = await callSleeper(token);
      expect(answer.status).toBe(401);
      const challenge = challengeOf(answer.headers['www-authenticate']);
      expect(challenge).toMatchObject({ resource_metadata: metadataUrl(), error: 'invalid_token' });
      expect(JSON.parse(answer.body).error.message).toMatch(reason);
      expect(lineCount(starts)).toBe(before);
    });
  }

  it('a token without the required scope: 403 insufficient_scope naming it and the scopes held, its caller in the log', async () => {
    const before = lineCount(starts);
    const answer = await callTool(bridge.url, await machineToken('tools:*'), 'sleeper', { action: 'wait' }, 41);
    expect(answer.status).toBe(403);
    expect(challengeOf(answer.headers['www-authenticate'])).toMatchObject({ resource_metadata: metadataUrl(), error: 'insufficient_scope', scope: 'mcp tools:*' });
    expect(JSON.parse(answer.body).id).toBe(41);
    await waitFor(() => bridge.events().some((event) => event.event === 'refused' && /lacks the scope mcp/.test(event.reason)), 'the refused line');
    const line = bridge.events().find((event) => event.event === 'refused' && /lacks the scope mcp/.test(event.reason));
    expect(line).toMatchObject({ status: 403, kind: 'insufficient_scope', sub: 'machine', client_id: 'machine' });
    expect(lineCount(starts)).toBe(before);
  });

  it('a token without the tool’s scope: 403 insufficient_scope naming the tool’s scope', async () => {
    const before = lineCount(starts);
    const answer = await callTool(bridge.url, await machineToken('mcp tools:echo'), 'sleeper', { action: 'wait' }, 'step-up');
    expect(answer.status).toBe(403);
    // The scope held is named too: a client that signs in again for this list keeps the echo.
    expect(challengeOf(answer.headers['www-authenticate'])).toMatchObject({ error: 'insufficient_scope', scope: 'mcp tools:sleeper tools:echo' });
    expect(JSON.parse(answer.body)).toMatchObject({ id: 'step-up', error: { message: 'the token grants no access to the tool "sleeper"' } });
    // In a batch too: one forbidden call refuses the lot.
    const batch = `[${toolsCall(1, 'echo', { text: 'a' })},${toolsCall(2, 'sleeper', { action: 'wait' })}]`;
    const headers = { ...MCP_HEADERS, authorization: `Bearer ${await machineToken('mcp tools:echo')}` };
    expect((await rawRequest(bridge.url, { headers, body: batch })).status).toBe(403);
    expect(lineCount(starts)).toBe(before);
  });
});

describe('tool names from the caller', () => {
  it('a name nobody serves is unknown, never echoed into a header, and cut in the log: non-Latin-1 or 100 KB', async () => {
    const token = await machineToken('mcp tools:echo');
    const before = lineCount(starts);
    for (const name of ['sleeper\u2603', `x${'y'.repeat(100_000)}`]) {
      const answer = await callTool(bridge.url, token, name, {}, 5);
      expect(answer.status).toBe(200);
      expect(answer.headers['www-authenticate']).toBeUndefined();
      expect(JSON.stringify(answer.headers).length).toBeLessThan(2000);
      expect(sseMessages(answer.body)[0]).toMatchObject({ id: 5, error: { code: -32602 } });
    }
    await waitFor(() => bridge.events().some((event) => event.event === 'call' && String(event.tool).startsWith('xyyy')), 'the call line of the long name');
    const line = bridge.events().find((event) => event.event === 'call' && String(event.tool).startsWith('xyyy'))!;
    expect(line.tool).toBe(`x${'y'.repeat(199)}... (100001 characters)`);
    expect(bridge.stderr().split('\n').every((text) => text.length < 5000)).toBe(true);
    expect(lineCount(starts)).toBe(before);
  });
});

describe('per-tool access', () => {
  it('tools/list shows a caller only the tools its scopes grant, and those it may call', async () => {
    const only = await bridge.connect({ token: await machineToken('mcp tools:echo') });
    expect((await only.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
    expect((await only.callTool({ name: 'echo', arguments: { text: 'mine' } })).structuredContent).toEqual({ text: 'mine' });
    const every = await bridge.connect({ token: await machineToken('mcp tools:*') });
    expect((await every.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['echo', 'sleeper']);
    const none = await bridge.connect({ token: await machineToken('mcp') });
    expect((await none.listTools()).tools).toEqual([]);
  });

  it('an opaque token is checked by introspection, and its client named in the log', async () => {
    const token = await as.clientCredentials(CLIENTS.opaque, bridge.url, 'mcp tools:echo');
    tokensSeen.push(token);
    expect(token.split('.')).toHaveLength(1);
    const client = await bridge.connect({ token });
    expect((await client.callTool({ name: 'echo', arguments: { text: 'opaque' } })).structuredContent).toEqual({ text: 'opaque' });
    await waitFor(() => bridge.events().some((event) => event.event === 'call' && event.client_id === 'opaque'), 'the call line of the opaque token');
  });
});

// Before the describes that start bridges of their own: each fetches the keys once at its start.
describe('the issuer’s keys', () => {
  it('a rotation is picked up: a token signed by the new key is accepted once the keys are refetched', async () => {
    const fetched = as.jwksFetches();
    const old = as.key();
    await as.rotate();
    const token = await machineToken('mcp tools:sleeper');
    // Refused while the last fetch is fresher than the cool-down, then accepted after one refetch.
    const deadline = Date.now() + 30_000;
    let status = 0;
    while (Date.now() < deadline && (status = (await callSleeper(token)).status) !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(status).toBe(200);
    expect(as.jwksFetches()).toBe(fetched + 1);
    // The old key is still published: its tokens stay good.
    expect((await callSleeper(await forged({}, { key: old.privateKey, kid: old.kid }))).status).toBe(200);
  }, 60_000);

  it('unknown key ids refetch the keys at most once per cool-down', async () => {
    const fetched = as.jwksFetches();
    const started = Date.now();
    const tries = 8;
    const statuses: number[] = [];
    for (let i = 0; i < tries; i += 1) {
      const answer = await callSleeper(await forged({}, { key: (await generateKeyPair('ES256')).privateKey, kid: `unknown-${i}` }));
      statuses.push(answer.status);
      // Within the cool-down it may be a rotation not seen yet: 503, try again later; after a fetch, the token's fault.
      if (answer.status === 503) expect(Number(answer.headers['retry-after'])).toBe(COOLDOWN_MS / 1000);
      else expect(challengeOf(answer.headers['www-authenticate'])).toMatchObject({ error: 'invalid_token' });
    }
    expect(statuses).toContain(503);
    expect(statuses.every((status) => status === 503 || status === 401)).toBe(true);
    const allowed = 1 + Math.floor((Date.now() - started) / COOLDOWN_MS);
    expect(as.jwksFetches() - fetched).toBeLessThanOrEqual(allowed);
    expect(allowed).toBeLessThan(tries); // else this run was too slow to show the limit
  });
});

describe('browse mode with per-tool scopes', () => {
  let browse: HttpBridgeProcess;
  beforeAll(async () => {
    const config = join(dir, 'browse.json');
    // A catalog tool named like browse mode's own, and one whose name cannot be a scope.
    const catalog = [{ command: ECHO }, { command: ECHO, name: 'twylt_call' }, { command: ECHO, name: '\u00e9cho\u2603' }, { command: SLEEPER }];
    writeFileSync(config, JSON.stringify({ tools: catalog }));
    browse = await startHttpBridge(['--catalog', 'browse', '--auth-issuer', as.issuer, '--auth-scope', 'mcp', '--auth-tool-scopes', '--config', config], { SLEEPER_LOG: starts });
  }, 60_000);
  afterAll(() => browse?.stop());

  const token = (scope: string) => forged({ aud: browse.url, scope });
  const browseCall = async (scope: string, name: string, id = 3) =>
    callTool(browse.url, await token(scope), 'twylt_call', { name, arguments: name === 'sleeper' ? { action: 'wait' } : { text: 'hi' } }, id);
  const listed = async (scope: string) => {
    const answer = await callTool(browse.url, await token(scope), 'twylt_list', {});
    expect(answer.status).toBe(200);
    return (sseMessages(answer.body)[0]!.result.structuredContent.tools as Array<{ name: string }>).map((tool) => tool.name).sort();
  };

  it('twylt_list shows the caller’s tools, and twylt_call runs them', async () => {
    expect(await listed('mcp tools:echo')).toEqual(['echo']);
    expect(await listed('mcp tools:twylt_call')).toEqual(['twylt_call']);
    expect(await listed('mcp tools:*')).toEqual(['echo', 'sleeper', 'twylt_call', '\u00e9cho\u2603']);
    const answer = await browseCall('mcp tools:echo', 'echo');
    expect(answer.status).toBe(200);
    expect(sseMessages(answer.body)[0]!.result.structuredContent).toEqual({ text: 'hi' });
  });

  it('a forbidden inner tool is the 403 step-up of a direct call, naming tools:<inner>; tools:twylt_call grants only the tool of that name', async () => {
    const before = lineCount(starts);
    const sleeper = await browseCall('mcp tools:echo', 'sleeper', 9);
    expect(sleeper.status).toBe(403);
    expect(challengeOf(sleeper.headers['www-authenticate'])).toMatchObject({ error: 'insufficient_scope', scope: 'mcp tools:sleeper tools:echo' });
    expect(JSON.parse(sleeper.body)).toMatchObject({ id: 9, error: { message: 'the token grants no access to the tool "sleeper"' } });
    const outer = await browseCall('mcp tools:twylt_call', 'sleeper');
    expect(outer.status).toBe(403);
    expect(challengeOf(outer.headers['www-authenticate']).scope).toBe('mcp tools:sleeper tools:twylt_call');
    const named = await browseCall('mcp tools:echo', 'twylt_call');
    expect(challengeOf(named.headers['www-authenticate']).scope).toBe('mcp tools:twylt_call tools:echo');
    expect((await browseCall('mcp tools:twylt_call', 'twylt_call')).status).toBe(200);
    expect(lineCount(starts)).toBe(before);
  });

  it('a tool whose name cannot be a scope is reached with tools:* only, and its 403 names tools:* in plain ASCII', async () => {
    const refused = await browseCall('mcp tools:echo', '\u00e9cho\u2603');
    expect(refused.status).toBe(403);
    expect(challengeOf(refused.headers['www-authenticate']).scope).toBe('mcp tools:* tools:echo');
    expect((await browseCall('mcp tools:*', '\u00e9cho\u2603')).status).toBe(200);
    const metadata = JSON.parse((await rawRequest(`${browse.base}/.well-known/oauth-protected-resource/mcp`, { method: 'GET' })).body);
    expect(metadata.scopes_supported).toEqual(['mcp', 'tools:*', 'tools:echo', 'tools:twylt_call', 'tools:sleeper']);
    // Unknown inner names are the model's mistake, answered as such, never a header.
    const unknown = await browseCall('mcp tools:echo', 'nothing\u2603');
    expect(unknown.status).toBe(200);
    expect(sseMessages(unknown.body)[0]!.result.isError).toBe(true);
  });
});

describe('introspection of JWTs, and an introspection endpoint that fails', () => {
  /** A stand-in introspection endpoint: tokens it was told are revoked are inactive; `refusing`, it answers 401 (a wrong client secret). */
  let stub: HttpServer;
  let stubUrl: string;
  let refusing = false;
  const revoked = new Set<string>();
  let revocable: HttpBridgeProcess;
  beforeAll(async () => {
    stub = createHttpServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        if (refusing) return void response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_client"}');
        const token = new URLSearchParams(body).get('token') ?? '';
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ active: !revoked.has(token) }));
      });
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}/introspect`;
    const clientFile = join(dir, 'stub-client.json');
    writeFileSync(clientFile, JSON.stringify({ client_id: 'bridge', client_secret: 'bridge-secret-0123456789' }));
    revocable = await startHttpBridge(
      ['--auth-issuer', as.issuer, '--auth-introspection', stubUrl, '--auth-client-file', clientFile, '--auth-introspect-jwt', '0', ...tools(ECHO)],
      {},
    );
  }, 60_000);
  afterAll(async () => {
    await revocable?.stop();
    await new Promise<void>((resolve) => stub?.close(() => resolve()));
  });

  const echo = (token: string, id: number | string = 1) => callTool(revocable.url, token, 'echo', { text: 'hi' }, id);

  it('a JWT revoked at the authorization server is refused at once (--auth-introspect-jwt 0)', async () => {
    const token = await forged({ aud: revocable.url });
    expect((await echo(token)).status).toBe(200);
    revoked.add(token);
    const answer = await echo(token);
    expect(answer.status).toBe(401);
    expect(challengeOf(answer.headers['www-authenticate'])).toMatchObject({ error: 'invalid_token' });
    expect(JSON.parse(answer.body).error.message).toMatch(/not active/);
  });

  it('the endpoint refusing the bridge’s client is a 503 without invalid_token or its address; the log has both', async () => {
    refusing = true;
    try {
      const answer = await echo(await forged({ aud: revocable.url }), 'r-1');
      expect(answer.status).toBe(503);
      expect(answer.headers['www-authenticate']).toBeUndefined();
      expect(answer.headers['retry-after']).toBe('5');
      expect(answer.body).not.toContain('invalid_token');
      expect(answer.body).not.toContain(stubUrl);
      expect(JSON.parse(answer.body)).toMatchObject({ id: 'r-1', error: { message: 'the access token cannot be checked now (the authorization server is unavailable); try again later' } });
      const shown = docBlocks().find((body) => body.includes('HTTP/1.1 503'))!;
      expect(shown).toContain(`HTTP/1.1 503 ${STATUS_CODES[503]}\nRetry-After: ${answer.headers['retry-after']}\n`);
      expect(readDoc('docs/mcp.md').replace(/\s+/g, ' ')).toContain(`\`${JSON.parse(answer.body).error.message}\``);
      await waitFor(() => revocable.events().some((event) => event.event === 'refused' && event.status === 503), 'the refused line');
      expect(revocable.events().find((event) => event.event === 'refused' && event.status === 503)).toMatchObject({
        kind: 'introspection_unavailable',
        detail: `introspection at ${stubUrl} answered HTTP 401`,
      });
    } finally {
      refusing = false;
    }
  });

  it('a client secret the endpoint refuses stops the start (exit 1), saying what to check', async () => {
    const wrong = join(dir, 'wrong-client.json');
    writeFileSync(wrong, JSON.stringify({ client_id: CLIENTS.introspector.id, client_secret: 'not-the-secret-0123456789' }));
    const introspection = `${as.issuer}/token/introspection`;
    const result = await run([process.execPath, BRIDGE_CLI, '--http', '127.0.0.1:0', '--auth-issuer', as.issuer, '--auth-introspection', introspection, '--auth-client-file', wrong, ...tools(ECHO)], {
      env: bridgeEnv(),
      cleanEnv: true,
      timeoutMs: 30_000,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `twylt-mcp: cannot start:\ntwylt-mcp: OAuth: the introspection endpoint ${introspection} refused the client "introspector" (HTTP 401): ` +
        'check the client_id and client_secret of --auth-client-file, and that this client may introspect tokens\n',
    );
    expect(result.stderr).not.toContain('not-the-secret');
    const shown = docBlocks().find((body) => body.includes('refused the client'))!;
    expect(result.stderr).toBe(shown.replace('https://sso.example.com/realms/acme/protocol/openid-connect/token/introspect', introspection).replace('"twylt-mcp"', '"introspector"'));
  });
});

describe('the MCP SDK’s OAuth client', () => {
  it('client credentials: gets its token by itself, and calls the tools its scopes grant', async () => {
    // The SDK asks for the scopes its client metadata names (not those of a 401 or 403).
    const provider = new ClientCredentialsProvider({ clientId: CLIENTS.machine.id, clientSecret: CLIENTS.machine.secret, scope: 'mcp tools:sleeper', expectedIssuer: as.issuer });
    const client = new Client({ name: 'oauth-machine', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(bridge.url), { authProvider: provider }));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['sleeper']);
    const before = lineCount(starts);
    const result = await client.callTool({ name: 'sleeper', arguments: { action: 'wait', note: 'by itself' } });
    expect(result.structuredContent).toMatchObject({ note: 'by itself' });
    expect(lineCount(starts)).toBe(before + 1);
    tokensSeen.push(provider.tokens()!.access_token);
    await client.close();
  });

  it('signs in once (authorization code with PKCE, a refresh token kept) for the scopes of the 401, and reaches the tools granted', async () => {
    const provider = new TestOAuthClient();
    const first = new StreamableHTTPClientTransport(new URL(bridge.url), { authProvider: provider });
    // The 401 sends the client through the metadata to the authorization server's sign-in.
    await expect(new Client({ name: 'oauth-test', version: '0.0.0' }).connect(first)).rejects.toThrow(UnauthorizedError);
    expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(bridge.url);
    expect(provider.authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256');
    // What the 401 names is what the SDK asks for: the required scope and every tool's.
    expect(provider.authorizationUrl?.searchParams.get('scope')).toBe(SIGN_IN_SCOPE);
    await first.finishAuth(await signedInCode(provider));
    expect(provider.saved?.refresh_token).toBeTruthy();
    // Signed in: the SDK's way on is a new transport, which takes the saved token.
    const transport = new StreamableHTTPClientTransport(new URL(bridge.url), { authProvider: provider });
    const client = new Client({ name: 'oauth-test', version: '0.0.0' });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['echo', 'sleeper']);
    // With a refresh token, the SDK answers a 403 by refreshing, which keeps the scope it had:
    // had the first sign-in asked for "mcp" only, this call would end in "403 after trying upscoping".
    const result = await client.callTool({ name: 'echo', arguments: { text: 'signed in' } });
    expect(result.structuredContent).toEqual({ text: 'signed in' });
    // An access token gone bad is replaced with the refresh token, no sign-in.
    const signIns = provider.authorizations;
    provider.saved = { ...provider.saved!, access_token: 'worn-out-0123456789' };
    expect((await client.callTool({ name: 'echo', arguments: { text: 'refreshed' } })).structuredContent).toEqual({ text: 'refreshed' });
    expect(provider.authorizations).toBe(signIns);
    tokensSeen.push(provider.saved!.access_token);
    await waitFor(() => bridge.events().some((event) => event.event === 'call' && event.sub === 'alice'), 'the call line of alice');
    const line = bridge.events().find((event) => event.event === 'call' && event.sub === 'alice')!;
    expect(line).toMatchObject({ tool: 'echo', outcome: 'ok', sub: 'alice', client_id: CLIENTS.app.id });
    await client.close();
  }, 60_000);

  it('a client without a refresh token steps up to a tool’s scope when refused, keeping the scopes it had', async () => {
    const provider = new TestOAuthClient();
    // A token narrower than a sign-in of this bridge asks for (got elsewhere), and no refresh token.
    provider.saved = { access_token: await machineToken('mcp tools:echo'), token_type: 'Bearer' };
    const transport = new StreamableHTTPClientTransport(new URL(bridge.url), { authProvider: provider });
    const client = new Client({ name: 'oauth-test', version: '0.0.0' });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
    // The sleeper's 403 asks for its scope and the echo's: the client signs in again for both.
    await expect(client.callTool({ name: 'sleeper', arguments: { action: 'wait' } })).rejects.toThrow(UnauthorizedError);
    expect(provider.authorizationUrl?.searchParams.get('scope')).toBe('mcp tools:sleeper tools:echo');
    await transport.finishAuth(await signedInCode(provider));
    expect((await client.callTool({ name: 'sleeper', arguments: { action: 'wait', note: 'stepped up' } })).structuredContent).toMatchObject({ note: 'stepped up' });
    expect((await client.callTool({ name: 'echo', arguments: { text: 'kept' } })).structuredContent).toEqual({ text: 'kept' });
    tokensSeen.push(provider.saved!.access_token);
    await client.close();
  }, 60_000);
});

describe('the log', () => {
  it('names the caller of each call, and holds no token', async () => {
    await callSleeper(await machineToken('mcp tools:sleeper'));
    await waitFor(() => bridge.events().some((event) => event.event === 'call' && event.client_id === 'machine'), 'a call line of the machine client');
    expect(bridge.events().find((event) => event.event === 'call' && event.client_id === 'machine')).toMatchObject({ sub: 'machine', client_id: 'machine' });
    expect(tokensSeen.length).toBeGreaterThan(0);
    const log = bridge.stderr();
    for (const token of tokensSeen) {
      // The signature is the secret part of a JWT; an opaque token is secret as a whole.
      expect(log).not.toContain(token.split('.').at(-1) || token);
    }
  });
});

describe('a tool never sees the token', () => {
  it.skipIf(!existsSync('/proc/self/environ'))('neither in its environment nor in its arguments (read from /proc while it runs; skipped without /proc)', async () => {
    const token = await machineToken('mcp tools:sleeper');
    const pidFile = join(dir, 'seen.pid');
    const release = join(dir, 'seen.release');
    const call = rawRequest(bridge.url, {
      headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` },
      body: toolsCall(1, 'sleeper', { action: 'wait', pid_file: pidFile, release_file: release }),
    });
    await waitFor(() => existsSync(pidFile), 'the sleeper to write its pid', 20_000);
    const pid = readFileSync(pidFile, 'utf8');
    const environment = readFileSync(`/proc/${pid}/environ`, 'utf8');
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    writeFileSync(release, '');
    expect((await call).status).toBe(200);
    expect(argv).toContain('release_file'); // what it was given: its input, as its argument
    const signature = token.split('.').at(-1)!;
    expect(environment).not.toContain(signature);
    expect(argv).not.toContain(signature);
  });
});

describe('docs/mcp.md shows the answers as the bridge sends them', () => {
  it('each refusal of the table: its status line and WWW-Authenticate header, byte for byte', async () => {
    const table = docBlocks().find((body) => body.startsWith('no token\nHTTP/1.1 401'));
    expect(table).toBeDefined();
    const cases = table!.trim().split('\n\n').map((text) => text.split('\n'));
    const answers: Record<string, () => Promise<Awaited<ReturnType<typeof callSleeper>>>> = {
      'no token': () => callSleeper(undefined),
      'a token that is not valid': async () => callSleeper(await forged({ iat: now() - 600, exp: now() - 120 })),
      'a valid token without a required scope': async () => callSleeper(await machineToken('tools:echo')),
      'a call of a tool the token has no scope for': async () => callSleeper(await machineToken('mcp tools:echo')),
    };
    let compared = 0;
    for (const [label, status, ...headers] of cases) {
      const make = Object.entries(answers).find(([start]) => label!.startsWith(start))?.[1];
      if (!make) continue; // the 503: shown by the introspection tests below
      const answer = await make();
      expect(status).toBe(`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}`);
      expect(headers.map(asHere)).toEqual([`WWW-Authenticate: ${answer.headers['www-authenticate']}`]);
      compared += 1;
    }
    expect(compared).toBe(Object.keys(answers).length);
  });

  it('the start-up error of an issuer that cannot be discovered, as printed', async () => {
    const shown = docBlocks().find((body) => body.includes('cannot discover the authorization server'));
    const result = await run([process.execPath, BRIDGE_CLI, '--http', '127.0.0.1:0', '--auth-issuer', `${as.issuer}/realms/acme`, ...tools(ECHO)], {
      env: bridgeEnv(),
      cleanEnv: true,
      timeoutMs: 30_000,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(asHere(shown!));
  });
});

describe('the command line', () => {
  const bridgeRun = (args: readonly string[], env: Record<string, string> = {}) =>
    run([process.execPath, BRIDGE_CLI, ...args], { env: { ...bridgeEnv(), SLEEPER_LOG: join(dir, 'cli-starts.log'), ...env }, cleanEnv: true, timeoutMs: 30_000 });

  it('OAuth and the shared token exclude each other: a usage error, nothing started', async () => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'a-token-of-at-least-16-chars');
    const fromFile = await bridgeRun(['--http', '127.0.0.1:0', '--auth-issuer', as.issuer, '--token-file', tokenFile, ...tools(SLEEPER)]);
    expect(fromFile.code).toBe(64);
    expect(fromFile.stderr).toContain('give either --token-file or --auth-issuer, not both');
    const fromEnv = await bridgeRun(['--http', '127.0.0.1:0', '--auth-issuer', as.issuer, ...tools(SLEEPER)], { TWYLT_MCP_TOKEN: 'a-token-of-at-least-16-chars' });
    expect(fromEnv.code).toBe(64);
    expect(fromEnv.stderr).toContain('give either TWYLT_MCP_TOKEN or --auth-issuer, not both');
    expect(lineCount(join(dir, 'cli-starts.log'))).toBe(0);
  });

  it('an http issuer beyond loopback, --auth-* options without --auth-issuer, a half or unreadable introspection client: usage errors', async () => {
    const plain = await bridgeRun(['--http', '127.0.0.1:0', '--auth-issuer', 'http://sso.example.com/realms/acme', ...tools(SLEEPER)]);
    expect(plain.code).toBe(64);
    expect(plain.stderr).toContain('must be an https URL');
    const stray = await bridgeRun(['--http', '127.0.0.1:0', '--auth-scope', 'mcp', ...tools(SLEEPER)]);
    expect(stray.code).toBe(64);
    expect(stray.stderr).toContain('--auth-scope needs --auth-issuer URL');
    const half = await bridgeRun(['--http', '127.0.0.1:0', '--auth-issuer', as.issuer, '--auth-introspection', `${as.issuer}/token/introspection`, ...tools(SLEEPER)]);
    expect(half.code).toBe(64);
    expect(half.stderr).toContain('--auth-introspection and --auth-client-file go together');
    const badClient = join(dir, 'bad-client.json');
    // The secret alone, not JSON: JSON.parse's own message would quote it.
    writeFileSync(badClient, 'a-secret-never-shown');
    const unreadable = await bridgeRun(['--http', '127.0.0.1:0', '--auth-issuer', as.issuer, '--auth-introspection', `${as.issuer}/token/introspection`, '--auth-client-file', badClient, ...tools(SLEEPER)]);
    expect(unreadable.code).toBe(64);
    expect(unreadable.stderr).toContain('must hold {"client_id": "...", "client_secret": "..."}');
    expect(unreadable.stderr).not.toContain('a-secret-never-shown');
  });

  it('an issuer that cannot be discovered stops the start (exit 1), saying where it looked', async () => {
    const result = await bridgeRun(['--http', '127.0.0.1:0', '--auth-issuer', `${as.issuer}/nowhere`, ...tools(SLEEPER)]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot discover the authorization server ${as.issuer}/nowhere`);
    expect(result.stderr).toContain(`${as.issuer}/.well-known/oauth-authorization-server/nowhere: HTTP 404`);
  });
});

/** The token with its header changed to `alg: none` and no signature. */
function unsigned(token: string): string {
  const [header, payload] = token.split('.');
  const changed = { ...JSON.parse(Buffer.from(header!, 'base64url').toString('utf8')), alg: 'none' };
  return `${base64url.encode(JSON.stringify(changed))}.${payload}.`;
}

/** The server's current public key as PEM, as an attacker would fetch and use it. */
function publicPem(): string {
  return createPublicKey({ key: as.key().publicJwk as never, format: 'jwk' })
    .export({ type: 'spki', format: 'pem' })
    .toString();
}

/** Sign in as alice at the URL the client was sent to; the code from the redirect back. */
async function signedInCode(provider: TestOAuthClient): Promise<string> {
  const back = await as.signIn(provider.authorizationUrl!, 'alice');
  const code = back.searchParams.get('code');
  if (!code) throw new Error(`no code in the redirect back: ${back.href}`);
  return code;
}

/** An OAuth client as the MCP SDK wants it: the registered public client `app`, state kept in memory. */
class TestOAuthClient implements OAuthClientProvider {
  authorizationUrl?: URL;
  saved?: OAuthTokens;
  private verifier?: string;
  get redirectUrl(): string {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { redirect_uris: [REDIRECT_URI], client_name: 'oauth-test', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation(): OAuthClientInformationMixed {
    return { client_id: CLIENTS.app.id };
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  /** How many times the client was sent to sign in. */
  authorizations = 0;
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
    this.authorizations += 1;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }
}
