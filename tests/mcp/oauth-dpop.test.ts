/**
 * DPoP (RFC 9449) end to end: `twylt-mcp --http --auth-issuer`, the real command, with
 * oidc-provider issuing DPoP-bound JWTs (features.dPoP) to clients that ask with a proof,
 * and two real DPoP clients: oauth4webapi, and the MCP SDK 2.x client
 * (`@modelcontextprotocol/client`, a provider with `dpop()`), which before this answered
 * `Server returned 401 after re-authentication`. Then the refusals a real bridge sends: the
 * bound token as a bearer token, a proof replayed byte for byte, and server nonces.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Client,
  ClientCredentialsProvider,
  DpopSession,
  StreamableHTTPClientTransport,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthTokens,
} from '@modelcontextprotocol/client';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENTS, REDIRECT_URI, startAuthServer, type AuthServer } from '../support/auth-server.js';
import { MCP_HEADERS, rawRequest, sseMessages, startHttpBridge, type HttpBridgeProcess } from '../support/mcp-http.js';
import { waitFor } from '../support/mcp.js';
import { example } from '../support/process.js';

const ECHO = example('echo');
const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'bound' } } });
const VERSION = JSON.parse(readFileSync(new URL('../../node_modules/@modelcontextprotocol/client/package.json', import.meta.url), 'utf8')).version as string;

let as: AuthServer;
let bridge: HttpBridgeProcess;
let nonceBridge: HttpBridgeProcess;
/** Per-tool scopes: two tools, echo and another echo named sleeper (a scope the test's issuer knows). */
let scopedBridge: HttpBridgeProcess;
const dir = mkdtempSync(join(tmpdir(), 'twylt-mcp-dpop-'));

beforeAll(async () => {
  as = await startAuthServer();
  const config = join(dir, 'tools.json');
  writeFileSync(config, JSON.stringify({ tools: [{ command: ECHO }, { command: ECHO, name: 'sleeper' }] }));
  [bridge, nonceBridge, scopedBridge] = await Promise.all([
    startHttpBridge(['--auth-issuer', as.issuer, '--auth-scope', 'mcp', '--', ...ECHO]),
    startHttpBridge(['--auth-issuer', as.issuer, '--auth-scope', 'mcp', '--auth-dpop-nonce', '--', ...ECHO]),
    startHttpBridge(['--auth-issuer', as.issuer, '--auth-scope', 'mcp', '--auth-tool-scopes', '--config', config]),
  ]);
}, 60_000);
afterAll(async () => {
  await bridge?.stop();
  await nonceBridge?.stop();
  await scopedBridge?.stop();
  await as?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** oauth4webapi as a client-credentials client of the test's issuer, with a DPoP key of its own. */
async function oauth4webapiClient(resource: string) {
  const issuer = new URL(as.issuer);
  const server = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true }));
  const client: oauth.Client = { client_id: CLIENTS.machine.id };
  const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
  /** The headers of each request to the bridge, as sent. */
  const sent: Headers[] = [];
  const fetchAndKeep: typeof fetch = (input, init) => {
    sent.push(new Headers(init?.headers));
    return fetch(input, init);
  };
  const grant = () =>
    oauth.clientCredentialsGrantRequest(server, client, oauth.ClientSecretBasic(CLIENTS.machine.secret), new URLSearchParams({ resource, scope: 'mcp' }), {
      DPoP,
      [oauth.allowInsecureRequests]: true,
    });
  let response = await grant();
  let tokens: oauth.TokenEndpointResponse;
  try {
    tokens = await oauth.processClientCredentialsResponse(server, client, response);
  } catch (error) {
    // oidc-provider may ask for its own nonce first (RFC 9449 section 8): oauth4webapi keeps it.
    if (!oauth.isDPoPNonceError(error)) throw error;
    response = await grant();
    tokens = await oauth.processClientCredentialsResponse(server, client, response);
  }
  /** POST `body` to the bridge with the token and a fresh proof, once more on use_dpop_nonce (oauth4webapi keeps the nonce). */
  const call = async (url: string, body = CALL) => {
    const once = () =>
      oauth.protectedResourceRequest(tokens.access_token, 'POST', new URL(url), new Headers(MCP_HEADERS), body, { DPoP, [oauth.allowInsecureRequests]: true, [oauth.customFetch]: fetchAndKeep });
    try {
      return await once();
    } catch (error) {
      if (!oauth.isDPoPNonceError(error)) throw error;
      return once();
    }
  };
  return { tokens, call, sent };
}

describe('oauth4webapi with a DPoP-bound token of oidc-provider', () => {
  it('calls a tool: the token is bound (cnf.jkt), sent as DPoP with a proof, and accepted', async () => {
    const { tokens, call, sent } = await oauth4webapiClient(bridge.url);
    expect(tokens.token_type).toBe('dpop');
    const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString());
    expect(claims.cnf.jkt).toMatch(/^[\w-]{43}$/);
    const answer = await call(bridge.url);
    expect(answer.status).toBe(200);
    expect(sseMessages(await answer.text())[0]!.result.structuredContent).toMatchObject({ text: 'bound' });
    expect(sent.at(-1)!.get('authorization')).toMatch(/^DPoP /);
    expect(sent.at(-1)!.get('dpop')).toMatch(/^ey/);
    // The log line is written as the answer goes out: wait for it.
    await waitFor(() => /"event":"call","tool":"echo","outcome":"ok".*"client_id":"machine"/.test(bridge.stderr()), 'the log line /"event":"call","tool":"echo","outcome":"ok".*"client_id":"machine"/');
    expect(bridge.stderr()).toMatch(/"event":"call","tool":"echo","outcome":"ok".*"client_id":"machine"/);
  });

  it('the same token as a bearer token: 401 sender_constrained, the challenge offering DPoP', async () => {
    const { tokens } = await oauth4webapiClient(bridge.url);
    const answer = await rawRequest(bridge.url, { headers: { ...MCP_HEADERS, authorization: `Bearer ${tokens.access_token}` }, body: CALL });
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toMatch(/^Bearer resource_metadata="[^"]+", error="invalid_token", error_description="a DPoP-bound token \(cnf\.jkt\) must be sent with the DPoP scheme.*", DPoP algs="ES256 /);
    // The log line is written as the answer goes out: wait for it.
    await waitFor(() => /"event":"refused","status":401,"kind":"sender_constrained"/.test(bridge.stderr()), 'the log line /"event":"refused","status":401,"kind":"sender_constrained"/');
    expect(bridge.stderr()).toMatch(/"event":"refused","status":401,"kind":"sender_constrained"/);
  });

  it('a proof replayed as it was sent: 401 invalid_dpop_proof, and the tool does not run again', async () => {
    const { call, sent } = await oauth4webapiClient(bridge.url);
    expect((await call(bridge.url)).status).toBe(200);
    const replayed = Object.fromEntries(sent.at(-1)!.entries());
    const calls = () => bridge.stderr().split('"event":"call"').length;
    const before = calls();
    const answer = await rawRequest(bridge.url, { headers: replayed, body: CALL });
    expect(calls()).toBe(before);
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toMatch(/^DPoP algs="[^"]+", resource_metadata="[^"]+", error="invalid_dpop_proof", error_description="this proof was used already/);
    expect(JSON.parse(answer.body)).toMatchObject({ id: 1, error: { message: expect.stringMatching(/invalid DPoP proof/) } });
  });

  it('with --auth-dpop-nonce: the first proof is answered use_dpop_nonce with a DPoP-Nonce, the next with it is accepted', async () => {
    const { call, sent } = await oauth4webapiClient(nonceBridge.url);
    const first = sent.length;
    const answer = await call(nonceBridge.url);
    expect(answer.status).toBe(200);
    expect(sent.length - first).toBe(2); // refused once for the nonce, then accepted
    const proofs = sent.slice(first).map((headers) => JSON.parse(Buffer.from(headers.get('dpop')!.split('.')[1]!, 'base64url').toString()));
    expect(proofs[0]!.nonce).toBeUndefined();
    expect(proofs[1]!.nonce).toMatch(/^[\w-]{16,}$/);
    expect(nonceBridge.stderr()).toMatch(/"kind":"use_dpop_nonce"/);
  });
});

describe(`the MCP SDK ${VERSION} client with dpop()`, () => {
  /** A client-credentials provider that binds its tokens to a DPoP key (SEP-1932). */
  class DpopClientCredentials extends ClientCredentialsProvider {
    private readonly session = DpopSession.create();
    dpop() {
      return this.session;
    }
  }

  for (const [label, target] of [
    ['', () => bridge],
    [' and server nonces', () => nonceBridge],
  ] as const) {
    it(`gets a DPoP-bound token, lists and calls the tools${label}`, async () => {
      const url = target().url;
      const provider = new DpopClientCredentials({ clientId: CLIENTS.machine.id, clientSecret: CLIENTS.machine.secret, scope: 'mcp', expectedIssuer: as.issuer });
      const client = new Client({ name: 'dpop-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
      try {
        expect(provider.tokens()?.token_type?.toLowerCase()).toBe('dpop');
        expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
        const result = await client.callTool({ name: 'echo', arguments: { text: 'from the SDK' } });
        expect(result.structuredContent).toMatchObject({ text: 'from the SDK' });
      } finally {
        await client.close();
      }
      expect(target().stderr()).toMatch(/"event":"call","tool":"echo","outcome":"ok"/);
    });
  }
});

/** The registered public client `app` as the 2.x SDK wants it, with a DPoP key: state in memory. */
class DpopApp implements OAuthClientProvider {
  authorizationUrl?: URL;
  saved?: OAuthTokens;
  authorizations = 0;
  private verifier?: string;
  private readonly session = DpopSession.create();
  get redirectUrl(): string {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { redirect_uris: [REDIRECT_URI], client_name: 'dpop-app', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
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
    this.authorizations += 1;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }
  dpop() {
    return this.session;
  }
}

describe(`step-up with the MCP SDK ${VERSION} client (docs/mcp.md)`, () => {
  it('signed in for fewer scopes, with a refresh token and DPoP: a 403 for a tool makes it sign in again for that scope, and the call goes through', async () => {
    const url = new URL(scopedBridge.url);
    const provider = new DpopApp();
    const first = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(new Client({ name: 'dpop-app', version: '1.0.0' }).connect(first)).rejects.toThrow();
    // The user grants less than asked: echo only.
    const narrower = new URL(provider.authorizationUrl!);
    narrower.searchParams.set('scope', 'mcp tools:echo');
    const back = await as.signIn(narrower, 'alice');
    await first.finishAuth(back.searchParams);
    expect(provider.saved?.refresh_token).toBeTruthy();
    expect(provider.saved?.token_type?.toLowerCase()).toBe('dpop');
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    const client = new Client({ name: 'dpop-app', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
      const signIns = provider.authorizations;
      // 403 insufficient_scope (a DPoP challenge): the 2.x client sends its user to sign in for the scope named.
      await expect(client.callTool({ name: 'sleeper', arguments: { text: 'x' } })).rejects.toThrow();
      expect(provider.authorizations).toBe(signIns + 1);
      expect(provider.authorizationUrl!.searchParams.get('scope')!.split(' ').sort()).toEqual(['mcp', 'tools:echo', 'tools:sleeper']);
      await transport.finishAuth((await as.signIn(provider.authorizationUrl!, 'alice')).searchParams);
      expect((await client.callTool({ name: 'sleeper', arguments: { text: 'stepped up' } })).structuredContent).toEqual({ text: 'stepped up' });
      expect((await client.callTool({ name: 'echo', arguments: { text: 'kept' } })).structuredContent).toEqual({ text: 'kept' });
    } finally {
      await client.close();
    }
  }, 60_000);
});
