/**
 * `twylt-mcp --http --auth-issuer URL`, the real command, as an OAuth 2.1 resource server of
 * a real authorization server started here (oidc-provider on 127.0.0.1, resource indicators,
 * JWT access tokens): Protected Resource Metadata without a token; client credentials;
 * every kind of bad token refused with the right status and WWW-Authenticate header while
 * no tool starts (the sleeper fixture appends a line to a file at each start); per-tool
 * scopes in tools/list and tools/call; opaque tokens by introspection; key rotation and
 * rate-limited key refetches; the MCP SDK's own OAuth client through the authorization-code
 * flow with PKCE, step-up included; and the call log, which names the caller, never the token.
 */
import { createPublicKey } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { SignJWT, base64url, generateKeyPair, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  const headers: Record<string, string> = { ...MCP_HEADERS, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) };
  return rawRequest(bridge.url, { headers, body: toolsCall(1, 'sleeper', { action: 'wait' }) });
}

/** `Bearer k1="v1", k2="v2"` as a map. */
function challengeOf(header: string | string[] | undefined): Record<string, string> {
  const text = String(header ?? '');
  expect(text).toMatch(/^Bearer /);
  return Object.fromEntries([...text.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1]!, match[2]!]));
}

const metadataUrl = () => `${bridge.base}/.well-known/oauth-protected-resource/mcp`;

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
        resource_name: 'twylt-mcp',
      });
    }
  });
});

describe('tokens refused, and nothing runs', () => {
  it('no token: 401 pointing to the metadata, with the required scope and no error code', async () => {
    const before = lineCount(starts);
    const answer = await callSleeper(undefined);
    expect(answer.status).toBe(401);
    expect(challengeOf(answer.headers['www-authenticate'])).toEqual({ resource_metadata: metadataUrl(), scope: 'mcp' });
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
    ['signed by a key the issuer does not publish (unknown kid)', async () => forged({}, { key: (await generateKeyPair('ES256')).privateKey, kid: 'stranger' }), /key/i],
    ['a token the issuer never issued (opaque, inactive at introspection)', async () => 'made-up-opaque-token-0123456789', /not active/],
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

  it('a token without the required scope: 403 insufficient_scope naming it', async () => {
    const before = lineCount(starts);
    const answer = await callSleeper(await machineToken('tools:*'));
    expect(answer.status).toBe(403);
    expect(challengeOf(answer.headers['www-authenticate'])).toMatchObject({ resource_metadata: metadataUrl(), error: 'insufficient_scope', scope: 'mcp' });
    expect(lineCount(starts)).toBe(before);
  });

  it('a token without the tool’s scope: 403 insufficient_scope naming the tool’s scope', async () => {
    const before = lineCount(starts);
    const answer = await callSleeper(await machineToken('mcp tools:echo'));
    expect(answer.status).toBe(403);
    expect(challengeOf(answer.headers['www-authenticate'])).toMatchObject({ error: 'insufficient_scope', scope: 'mcp tools:sleeper' });
    expect(JSON.parse(answer.body).error.message).toContain('"sleeper"');
    // In a batch too: one forbidden call refuses the lot.
    const batch = `[${toolsCall(1, 'echo', { text: 'a' })},${toolsCall(2, 'sleeper', { action: 'wait' })}]`;
    const headers = { ...MCP_HEADERS, authorization: `Bearer ${await machineToken('mcp tools:echo')}` };
    expect((await rawRequest(bridge.url, { headers, body: batch })).status).toBe(403);
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
    for (let i = 0; i < tries; i += 1) {
      const answer = await callSleeper(await forged({}, { key: (await generateKeyPair('ES256')).privateKey, kid: `unknown-${i}` }));
      expect(answer.status).toBe(401);
    }
    const allowed = 1 + Math.floor((Date.now() - started) / COOLDOWN_MS);
    expect(as.jwksFetches() - fetched).toBeLessThanOrEqual(allowed);
    expect(allowed).toBeLessThan(tries); // else this run was too slow to show the limit
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

  it('signs in (authorization code with PKCE), steps up to a tool’s scope when refused, and calls it', async () => {
    const provider = new TestOAuthClient();
    const first = new StreamableHTTPClientTransport(new URL(bridge.url), { authProvider: provider });
    // The 401 sends the client through the metadata to the authorization server's sign-in.
    await expect(new Client({ name: 'oauth-test', version: '0.0.0' }).connect(first)).rejects.toThrow(UnauthorizedError);
    expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(bridge.url);
    expect(provider.authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256');
    await first.finishAuth(await signedInCode(provider));
    // Signed in: the SDK's way on is a new transport, which takes the saved token.
    const transport = new StreamableHTTPClientTransport(new URL(bridge.url), { authProvider: provider });
    const client = new Client({ name: 'oauth-test', version: '0.0.0' });
    await client.connect(transport);
    expect((await client.listTools()).tools).toEqual([]); // the token grants "mcp" only
    // The echo's 403 asks for its scope: the client goes through the sign-in again for it.
    await expect(client.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toThrow(UnauthorizedError);
    expect(provider.authorizationUrl?.searchParams.get('scope')).toBe('mcp tools:echo');
    await transport.finishAuth(await signedInCode(provider));
    const result = await client.callTool({ name: 'echo', arguments: { text: 'signed in' } });
    expect(result.structuredContent).toEqual({ text: 'signed in' });
    tokensSeen.push(provider.saved!.access_token);
    await waitFor(() => bridge.events().some((event) => event.event === 'call' && event.sub === 'alice'), 'the call line of alice');
    const line = bridge.events().find((event) => event.event === 'call' && event.sub === 'alice')!;
    expect(line).toMatchObject({ tool: 'echo', outcome: 'ok', sub: 'alice', client_id: CLIENTS.app.id });
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
    return { redirect_uris: [REDIRECT_URI], client_name: 'oauth-test', grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
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
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }
}
