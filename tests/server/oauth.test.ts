/**
 * The OAuth pieces of twylt/server on their own: where an issuer's and a resource's
 * metadata live, which URLs may name an authorization server, how scopes are read, and
 * createResourceServer against an issuer laid out as Keycloak lays out a realm (the
 * metadata only at `/realms/NAME/.well-known/openid-configuration`, `azp` instead of
 * `client_id`, Entra's `scp`), on a real node:http server on 127.0.0.1; and what that issuer
 * failing does (keys or introspection unavailable: 503, the token not blamed), the cache of
 * JWT introspection, and bound tokens (`cnf`) in an introspection answer.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authServerUrl,
  createResourceServer,
  issuerMetadataUrls,
  mayCallTool,
  resourceMetadataPaths,
  toolScope,
  resourceMetadataUrl,
  scopesOf,
} from '../../packages/twylt/src/server/index.js';

describe('URLs', () => {
  it('tries OAuth metadata first, then OpenID Connect inserted and appended', () => {
    expect(issuerMetadataUrls('https://sso.example.com/realms/acme')).toEqual([
      'https://sso.example.com/.well-known/oauth-authorization-server/realms/acme',
      'https://sso.example.com/.well-known/openid-configuration/realms/acme',
      'https://sso.example.com/realms/acme/.well-known/openid-configuration',
    ]);
    expect(issuerMetadataUrls('https://tenant.auth0.com/')).toEqual([
      'https://tenant.auth0.com/.well-known/oauth-authorization-server',
      'https://tenant.auth0.com/.well-known/openid-configuration',
    ]);
  });

  it('puts the resource metadata before the resource path (RFC 9728)', () => {
    expect(resourceMetadataUrl('https://mcp.example.com/mcp')).toBe('https://mcp.example.com/.well-known/oauth-protected-resource/mcp');
    expect(resourceMetadataUrl('https://mcp.example.com/')).toBe('https://mcp.example.com/.well-known/oauth-protected-resource');
    expect(resourceMetadataPaths('https://mcp.example.com/tools/mcp')).toEqual(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/tools/mcp']);
  });

  it('takes https for an authorization server, http on loopback only', () => {
    expect(authServerUrl('https://sso.example.com/realms/acme').host).toBe('sso.example.com');
    expect(authServerUrl('http://127.0.0.1:8080').port).toBe('8080');
    expect(authServerUrl('http://localhost:8080').hostname).toBe('localhost');
    expect(() => authServerUrl('http://sso.example.com')).toThrow(/must be an https URL/);
    expect(() => authServerUrl('sso.example.com')).toThrow(/is not a URL/);
    expect(() => authServerUrl('https://sso.example.com/?x=1')).toThrow(/query or a fragment/);
  });
});

describe('scopes', () => {
  it('reads scope and scp, and grants a tool by its own scope or tools:*', () => {
    expect(scopesOf({ scope: 'mcp  tools:echo' })).toEqual(['mcp', 'tools:echo']);
    expect(scopesOf({ scp: ['mcp', 'tools:*', 7] })).toEqual(['mcp', 'tools:*']);
    expect(mayCallTool({ scopes: ['tools:echo'] }, 'echo')).toBe(true);
    expect(mayCallTool({ scopes: ['tools:echo'] }, 'echo2')).toBe(false);
    expect(mayCallTool({ scopes: ['tools:*'] }, 'anything')).toBe(true);
    expect(mayCallTool({}, 'anything')).toBe(true); // a shared token: no scopes to go by
  });

  it('gives a tool a scope only when its name can be one: printable ASCII, no quote or backslash, 128 characters at most', () => {
    expect(toolScope('git.log-2')).toBe('tools:git.log-2');
    for (const name of ['\u00e9cho', 'a b', 'say"hi', 'back\\slash', 'x'.repeat(129), '']) expect(toolScope(name)).toBeUndefined();
    expect(toolScope('x'.repeat(128))).toBe(`tools:${'x'.repeat(128)}`);
    expect(mayCallTool({ scopes: ['tools:\u00e9cho'] }, '\u00e9cho')).toBe(false);
    expect(mayCallTool({ scopes: ['tools:*'] }, '\u00e9cho')).toBe(true);
  });
});

describe('an issuer laid out as a Keycloak realm', () => {
  let http: Server;
  let issuer: string;
  let privateKey: CryptoKey;
  const paths: string[] = [];
  const resource = 'https://mcp.example.com/mcp';
  /** What the keys and the introspection endpoint answer: 200, or a failure. */
  let keysStatus = 200;
  let introspectionStatus = 200;
  /** The introspection answer's claims for an active token; tokens named in `revoked` are inactive. */
  let introspected: Record<string, unknown> = {};
  const revoked = new Set<string>();
  const introspections: string[] = [];
  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'realm-key', alg: 'RS256', use: 'sig' };
    http = createServer((request: IncomingMessage, response) => {
      paths.push(request.url ?? '');
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        if (request.url === '/realms/acme/protocol/openid-connect/token/introspect') {
          const token = new URLSearchParams(body).get('token') ?? '';
          introspections.push(token);
          const answer = revoked.has(token) ? { active: false } : { active: true, iss: issuer, aud: resource, ...introspected };
          return void response.writeHead(introspectionStatus, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
        }
        const answers: Record<string, unknown> = {
          '/realms/acme/.well-known/openid-configuration': { issuer, jwks_uri: `${issuer}/protocol/openid-connect/certs` },
          '/realms/acme/protocol/openid-connect/certs': { keys: [jwk] },
        };
        const answer = answers[request.url ?? ''];
        const status = answer === undefined ? 404 : request.url?.endsWith('/certs') ? keysStatus : 200;
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer ?? { error: 'not found' }));
      });
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}/realms/acme`;
  });
  afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())));

  it('is discovered at the appended path, and its tokens name their caller by sub and azp', async () => {
    const server = await createResourceServer({ issuer, resource, requiredScopes: ['mcp'] });
    expect(paths.slice(0, 3)).toEqual([
      '/.well-known/oauth-authorization-server/realms/acme',
      '/.well-known/openid-configuration/realms/acme',
      '/realms/acme/.well-known/openid-configuration',
    ]);
    const token = await new SignJWT({ scp: ['mcp', 'tools:echo'], azp: 'claude-connector' })
      .setProtectedHeader({ alg: 'RS256', kid: 'realm-key', typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(['account', resource])
      .setSubject('7f1c0b1e')
      .setExpirationTime('5m')
      .sign(privateKey);
    const request = { headers: { authorization: `Bearer ${token}` } } as IncomingMessage;
    expect(await server.authenticate(request)).toEqual({ caller: { sub: '7f1c0b1e', clientId: 'claude-connector', scopes: ['mcp', 'tools:echo'], scheme: 'Bearer' } });
    expect(server.metadataUrl).toBe('https://mcp.example.com/.well-known/oauth-protected-resource/mcp');
  });

  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } }) as IncomingMessage;
  const token = (claims: Record<string, unknown> = {}, kid = 'realm-key') =>
    new SignJWT({ scope: 'mcp', ...claims }).setProtectedHeader({ alg: 'RS256', kid }).setIssuer(issuer).setAudience(resource).setSubject('s').setExpirationTime('5m').sign(privateKey);
  const introspection = () => ({ url: `${issuer}/protocol/openid-connect/token/introspect`, clientId: 'bridge', clientSecret: 'bridge-secret' });

  it('keys that cannot be fetched when a new key id comes: 503 keys_unavailable, the token not blamed, the URL for the log only', async () => {
    const server = await createResourceServer({ issuer, resource, jwksCooldownMs: 0 });
    keysStatus = 500;
    try {
      const { denial } = await server.authenticate(bearer(await token({}, 'rotated-key')));
      expect(denial).toMatchObject({ status: 503, kind: 'keys_unavailable' });
      expect(denial!.challenge).toBeUndefined();
      expect(denial!.reason).not.toContain(issuer);
      expect(denial!.detail).toContain(issuer);
    } finally {
      keysStatus = 200;
    }
    // A key id the issuer does not publish, with its keys reachable: the token's fault.
    expect((await server.authenticate(bearer(await token({}, 'rotated-key')))).denial).toMatchObject({ status: 401, kind: 'invalid_token' });
  });

  it('introspects each JWT once per cache time (--auth-introspect-jwt), and a revoked one is refused once its answer is not kept', async () => {
    const kept = await createResourceServer({ issuer, resource, introspection: introspection(), introspectJwtSeconds: 300 });
    const fresh = await createResourceServer({ issuer, resource, introspection: introspection(), introspectJwtSeconds: 0 });
    const one = await token();
    introspections.length = 0;
    for (let i = 0; i < 3; i += 1) expect((await kept.authenticate(bearer(one))).caller).toMatchObject({ sub: 's' });
    expect(introspections).toEqual([one]);
    expect((await kept.authenticate(bearer(await token({ jti: 'other' })))).caller).toBeDefined();
    expect(introspections).toHaveLength(2);
    revoked.add(one);
    // Kept 300 s: still good here; asked every time: refused at once.
    expect((await kept.authenticate(bearer(one))).caller).toBeDefined();
    expect((await fresh.authenticate(bearer(one))).denial).toMatchObject({ status: 401, kind: 'invalid_token', reason: expect.stringMatching(/not active/) });
  });

  it('an introspection answer bound to a key (cnf) is refused; an endpoint that refuses the client stops the start, or later answers 503', async () => {
    const server = await createResourceServer({ issuer, resource, introspection: introspection() });
    // Sent under the DPoP scheme, but bound to no key (no cnf.jkt): no proof can vouch for it (tests/server/dpop.test.ts for bound ones).
    const dpop = { headers: { authorization: 'DPoP opaque-bound-token', dpop: 'a.proof.jwt' } } as unknown as IncomingMessage;
    expect((await server.authenticate(dpop)).denial).toMatchObject({ status: 401, kind: 'invalid_token', reason: expect.stringMatching(/not bound to a DPoP key/) });
    introspected = { cnf: { 'x5t#S256': 'bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2' } };
    try {
      expect((await server.authenticate(bearer('opaque-bound-token'))).denial).toMatchObject({ status: 401, kind: 'sender_constrained' });
    } finally {
      introspected = {};
    }
    introspectionStatus = 401;
    try {
      const { denial } = await server.authenticate(bearer('opaque-token'));
      expect(denial).toMatchObject({ status: 503, kind: 'introspection_unavailable' });
      expect(denial!.challenge).toBeUndefined();
      expect(denial!.reason).not.toMatch(/introspect|127\.0\.0\.1/);
      await expect(createResourceServer({ issuer, resource, introspection: introspection() })).rejects.toThrow(/refused the client "bridge" \(HTTP 401\)/);
    } finally {
      introspectionStatus = 200;
    }
  });

  it('a 401 names the required and offered scopes within 2048 characters; a 403 always names the one missing', async () => {
    const offered = ['tools:*', ...Array.from({ length: 500 }, (_, i) => `tools:tool_number_${i}`)];
    const server = await createResourceServer({ issuer, resource, requiredScopes: ['mcp'], offeredScopes: () => offered });
    const scopeIn = (challenge: string | undefined) => /scope="([^"]*)"/.exec(challenge ?? '')?.[1] ?? '';
    const asked = scopeIn((await server.authenticate({ headers: {} } as IncomingMessage)).denial?.challenge).split(' ');
    expect(asked.slice(0, 3)).toEqual(['mcp', 'tools:*', 'tools:tool_number_0']);
    expect(asked.join(' ').length).toBeLessThanOrEqual(2048);
    expect(asked.join(' ').length).toBeGreaterThan(2000);
    expect(server.metadata().scopes_supported).toHaveLength(502); // all, with the required one
    // A caller holding every tool but the last: the scope it lacks comes first, whatever is cut.
    const caller = { scopes: ['mcp', ...offered.slice(1, -1)] };
    const stepUp = scopeIn(server.insufficientScope(caller, ['tools:tool_number_499'], 'no access').challenge).split(' ');
    expect(stepUp.slice(0, 3)).toEqual(['mcp', 'tools:tool_number_499', 'tools:tool_number_0']);
    expect(stepUp.join(' ').length).toBeLessThanOrEqual(2048);
  });

  it('refuses to start when the metadata names another issuer', async () => {
    await expect(createResourceServer({ issuer: `${issuer}/`, resource })).rejects.toThrow(/names the issuer .* not /);
  });
});
