/**
 * The resource server's DPoP (RFC 9449), key rotation and introspection credentials, in
 * process, against an issuer of this test on a real node:http server on 127.0.0.1 (its
 * metadata, a JWKS that can rotate, an introspection endpoint): each rule of a proof broken
 * alone, replays, server nonces, `htu` behind a proxy, bound tokens as bearer tokens; a
 * token of a key not fetched yet (503 Retry-After, not 401); Basic credentials raw or
 * form-encoded.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, base64url, calculateJwkThumbprint, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessTokenHash, createResourceServer, ProofLog, type ResourceServer } from '../../packages/twylt/src/server/index.js';

const RESOURCE = 'https://mcp.example.com/mcp';
const now = () => Math.floor(Date.now() / 1000);

let http: Server;
let issuer: string;
/** The issuer's signing keys, the first signing; all published. */
const signing: Array<{ kid: string; privateKey: CryptoKey; jwk: JWK }> = [];
let jwksFetches = 0;
/** What the introspection endpoint answers for any token; and which Basic credentials it takes. */
let introspected: Record<string, unknown> = { active: false };
let acceptBasic: (authorization: string) => boolean = () => true;

async function newSigningKey(): Promise<void> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = randomUUID();
  signing.unshift({ kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } });
}

beforeAll(async () => {
  await newSigningKey();
  http = createServer((request, response) => {
    const json = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    request.resume();
    request.on('end', () => {
      if (request.url === '/.well-known/oauth-authorization-server') return json(200, { issuer, jwks_uri: `${issuer}/jwks`, introspection_endpoint: `${issuer}/introspect` });
      if (request.url === '/jwks') {
        jwksFetches += 1;
        return json(200, { keys: signing.map((key) => key.jwk) });
      }
      if (request.url === '/introspect') return acceptBasic(request.headers.authorization ?? '') ? json(200, introspected) : json(401, { error: 'invalid_client' });
      json(404, {});
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())));

/** A client's DPoP key: its key pair, public JWK and thumbprint. */
interface ClientKey {
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
}
async function clientKey(alg = 'ES256'): Promise<ClientKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
}

/** An access token of the issuer, bound to `jkt` when given. */
function accessToken(jkt?: string, claims: Record<string, unknown> = {}): Promise<string> {
  const { kid, privateKey } = signing[0]!;
  return new SignJWT({ scope: 'mcp', client_id: 'dpop-client', ...(jkt && { cnf: { jkt } }), ...claims })
    .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
    .setIssuer(issuer)
    .setAudience((claims.aud as string | undefined) ?? RESOURCE)
    .setSubject('alice')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(privateKey);
}

interface ProofParts {
  header?: Record<string, unknown>;
  claims?: Record<string, unknown>;
  key?: CryptoKey;
}
/** A proof for POST RESOURCE with `token`, by `key`, with `parts` changed. */
function proof(key: ClientKey, token: string, parts: ProofParts = {}): Promise<string> {
  const claims = { jti: randomUUID(), htm: 'POST', htu: RESOURCE, iat: now(), ath: accessTokenHash(token), ...parts.claims };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete (claims as Record<string, unknown>)[name];
  return new SignJWT(claims).setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk, ...parts.header } as never).sign(parts.key ?? key.privateKey);
}

/** A request as the server sees it behind its proxy: POST /mcp, with these headers. */
function request(headers: Record<string, string | string[]>, url = '/mcp', method = 'POST'): IncomingMessage {
  return { method, url, headers } as unknown as IncomingMessage;
}
const dpopRequest = (token: string, proofs: string | string[] | undefined, url?: string, method?: string) =>
  request({ authorization: `DPoP ${token}`, ...(proofs !== undefined && { dpop: proofs }) }, url, method);

/** `SCHEME k1="v1", k2="v2"` as a map (the first challenge's parameters first). */
const paramsOf = (challenge: string | undefined) => Object.fromEntries([...String(challenge).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));

describe('DPoP proofs (RFC 9449)', () => {
  let server: ResourceServer;
  let key: ClientKey;
  let token: string;
  beforeAll(async () => {
    server = await createResourceServer({ issuer, resource: RESOURCE, requiredScopes: ['mcp'] });
    key = await clientKey();
    token = await accessToken(key.jkt);
  });

  it('a bound token with a proof of its key is accepted, by the DPoP scheme; the metadata names the proof algorithms', async () => {
    const { caller, denial } = await server.authenticate(dpopRequest(token, await proof(key, token)));
    expect(denial).toBeUndefined();
    expect(caller).toEqual({ sub: 'alice', clientId: 'dpop-client', scopes: ['mcp'], scheme: 'DPoP' });
    expect(server.metadata().dpop_signing_alg_values_supported).toEqual(expect.arrayContaining(['ES256', 'RS256', 'PS256', 'EdDSA']));
    expect(server.metadata().dpop_signing_alg_values_supported).not.toContain('HS256');
    // An RSA and an Ed25519 key are proofs too.
    for (const alg of ['RS256', 'PS256', 'EdDSA']) {
      const other = await clientKey(alg);
      const bound = await accessToken(other.jkt);
      const signed = await new SignJWT({ jti: randomUUID(), htm: 'POST', htu: RESOURCE, iat: now(), ath: accessTokenHash(bound) })
        .setProtectedHeader({ typ: 'dpop+jwt', alg, jwk: other.jwk } as never)
        .sign(other.privateKey);
      expect((await server.authenticate(dpopRequest(bound, signed))).denial, alg).toBeUndefined();
    }
  });

  // Each breaks one rule of RFC 9449 section 4.3; the challenge is DPoP's, with error="invalid_dpop_proof".
  const broken: Array<[string, () => Promise<string | string[] | undefined>, RegExp]> = [
    ['no DPoP header', async () => undefined, /needs a DPoP header/],
    ['two proofs', async () => [await proof(key, token), await proof(key, token)], /one DPoP header/],
    ['two proofs in one header', async () => `${await proof(key, token)}, ${await proof(key, token)}`, /one DPoP header/],
    ['typ JWT, not dpop+jwt', () => proof(key, token, { header: { typ: 'JWT' } }), /"typ"/],
    ['signed with HMAC', () => proof(key, token, { header: { alg: 'HS256' }, key: new TextEncoder().encode('0123456789abcdef0123456789abcdef') as never }), /alg/i],
    ['alg none', async () => unsigned(await proof(key, token)), /alg/i],
    ['no jwk in its header', () => proof(key, token, { header: { jwk: undefined } }), /"jwk"/],
    ['a private key in its jwk', async () => proof(key, token, { header: { jwk: await exportJWK(key.privateKey) } }), /public key/],
    ['signed by another key than its jwk', async () => proof(key, token, { key: (await clientKey()).privateKey }), /signature/],
    ['htm GET for a POST', () => proof(key, token, { claims: { htm: 'GET' } }), /"htm" must be POST/],
    ['htu of another host', () => proof(key, token, { claims: { htu: 'https://evil.example.com/mcp' } }), /"htu" must be https:\/\/mcp\.example\.com\/mcp/],
    ['htu of another path', () => proof(key, token, { claims: { htu: 'https://mcp.example.com/other' } }), /"htu"/],
    ['htu of the address behind the proxy', () => proof(key, token, { claims: { htu: 'http://127.0.0.1:8080/mcp' } }), /"htu"/],
    ['no iat', () => proof(key, token, { claims: { iat: undefined } }), /"iat"/],
    ['iat 70 s ago', () => proof(key, token, { claims: { iat: now() - 70 } }), /"iat" is more than 60 seconds old/],
    ['iat 30 s ahead', () => proof(key, token, { claims: { iat: now() + 30 } }), /"iat" is in the future/],
    ['no ath', () => proof(key, token, { claims: { ath: undefined } }), /"ath"/],
    ['ath of another token', () => proof(key, token, { claims: { ath: accessTokenHash(`${token}x`) } }), /"ath"/],
    ['no jti', () => proof(key, token, { claims: { jti: undefined } }), /"jti"/],
    ['by a key the token is not bound to', async () => proof(await clientKey(), token), /cnf\.jkt/],
  ];
  for (const [what, make, reason] of broken) {
    it(`${what}: 401 invalid_dpop_proof`, async () => {
      const { denial } = await server.authenticate(dpopRequest(token, await make()));
      expect(denial).toMatchObject({ status: 401, kind: 'invalid_dpop_proof' });
      expect(denial!.reason).toMatch(reason);
      expect(denial!.challenge).toMatch(/^DPoP algs="ES256 [^"]*", resource_metadata="[^"]+", error="invalid_dpop_proof", error_description="/);
    });
  }

  it('iat within the window (55 s ago, 3 s ahead), htu with a query, upper-case host or default port: accepted', async () => {
    for (const claims of [{ iat: now() - 55 }, { iat: now() + 3 }, { htu: `${RESOURCE}?x=1#f` }, { htu: 'HTTPS://MCP.EXAMPLE.COM:443/mcp' }]) {
      expect((await server.authenticate(dpopRequest(token, await proof(key, token, { claims })))).denial, JSON.stringify(claims)).toBeUndefined();
    }
  });

  it('htu: the public URL, whatever path the proxy forwards to (the resource itself, or its origin and the path asked)', async () => {
    const atRoot = await createResourceServer({ issuer, resource: 'https://mcp.example.com/' });
    const rootToken = await accessToken(key.jkt, { aud: 'https://mcp.example.com/' });
    const at = async (htu: string, path: string) => (await atRoot.authenticate(dpopRequest(rootToken, await proof(key, rootToken, { claims: { htu } }), path))).denial;
    expect(await at('https://mcp.example.com/mcp', '/mcp')).toBeUndefined();
    expect(await at('https://mcp.example.com/', '/mcp')).toBeUndefined();
    expect(await at('https://mcp.example.com/other', '/mcp')).toMatchObject({ kind: 'invalid_dpop_proof' });
    // A request target that reads as another host does not make that host's URL acceptable.
    expect(await at('https://evil.example.com/mcp', '//evil.example.com/mcp')).toMatchObject({ kind: 'invalid_dpop_proof' });
  });

  it('a proof is used once: the same one again is refused, on the same or another request', async () => {
    const once = await proof(key, token);
    expect((await server.authenticate(dpopRequest(token, once))).denial).toBeUndefined();
    const { denial } = await server.authenticate(dpopRequest(token, once));
    expect(denial).toMatchObject({ status: 401, kind: 'invalid_dpop_proof', reason: expect.stringMatching(/used already/) });
  });

  it('remembers proofs within a bounded memory: expired ones go first, then the oldest', () => {
    const log = new ProofLog(3);
    const t = 1_000_000;
    expect(log.remember('k', 'a', t + 10, t)).toBe(true);
    expect(log.remember('k', 'a', t + 10, t + 5)).toBe(false);
    expect(log.remember('other-key', 'a', t + 10, t)).toBe(true); // per key
    expect(log.remember('k', 'b', t + 100, t)).toBe(true);
    expect(log.remember('k', 'c', t + 100, t + 20)).toBe(true); // the two expired ones made room
    expect(log.size).toBe(2);
    expect(log.remember('k', 'a', t + 100, t + 20)).toBe(true); // expired: new again
    expect(log.remember('k', 'd', t + 100, t + 20)).toBe(true); // full: the oldest (b) went
    expect(log.size).toBe(3);
    expect(log.remember('k', 'c', t + 100, t + 20)).toBe(false);
  });

  it('a DPoP-bound token sent as a bearer token is refused, the challenge offering DPoP; a bearer token under DPoP too', async () => {
    const { denial } = await server.authenticate(request({ authorization: `Bearer ${token}` }));
    expect(denial).toMatchObject({ status: 401, kind: 'sender_constrained', reason: expect.stringMatching(/DPoP scheme/) });
    expect(denial!.challenge).toMatch(/^Bearer resource_metadata="[^"]+", error="invalid_token", .*, DPoP algs="ES256 /);
    const plain = await accessToken();
    const asDpop = await server.authenticate(dpopRequest(plain, await proof(key, plain)));
    expect(asDpop.denial).toMatchObject({ status: 401, kind: 'invalid_token', reason: expect.stringMatching(/not bound to a DPoP key/) });
    expect(asDpop.denial!.challenge).toMatch(/^DPoP algs=/);
  });

  it('no token: both challenges, Bearer first (for the clients that know only it), then DPoP with its algorithms', async () => {
    const { denial } = await server.authenticate(request({}));
    expect(denial!.challenge).toMatch(/^Bearer resource_metadata="https:\/\/mcp\.example\.com\/\.well-known\/oauth-protected-resource\/mcp", scope="mcp", DPoP algs="ES256 ES384 ES512 RS256 /);
  });

  it('a 403 to a DPoP caller is a DPoP challenge', async () => {
    const needy = await createResourceServer({ issuer, resource: RESOURCE, requiredScopes: ['mcp', 'admin'] });
    const { denial } = await needy.authenticate(dpopRequest(token, await proof(key, token)));
    expect(denial).toMatchObject({ status: 403, kind: 'insufficient_scope' });
    expect(denial!.challenge).toMatch(/^DPoP algs="[^"]+", resource_metadata="[^"]+", error="insufficient_scope", scope="mcp admin"$/);
  });

  it('with server nonces: a proof without one is answered use_dpop_nonce and a DPoP-Nonce; with it, accepted', async () => {
    const strict = await createResourceServer({ issuer, resource: RESOURCE, dpopNonces: true });
    const first = await strict.authenticate(dpopRequest(token, await proof(key, token)));
    expect(first.denial).toMatchObject({ status: 401, kind: 'use_dpop_nonce' });
    expect(paramsOf(first.denial!.challenge)).toMatchObject({ error: 'use_dpop_nonce' });
    const nonce = first.denial!.headers?.['dpop-nonce'];
    expect(nonce).toMatch(/^[\w-]{16,}$/);
    expect((await strict.authenticate(dpopRequest(token, await proof(key, token, { claims: { nonce } })))).denial).toBeUndefined();
    // Another replica's nonce (another server): not this one's.
    const other = await createResourceServer({ issuer, resource: RESOURCE, dpopNonces: true });
    expect((await other.authenticate(dpopRequest(token, await proof(key, token, { claims: { nonce } })))).denial).toMatchObject({ kind: 'use_dpop_nonce' });
    // A bad proof with a nonce: still the proof's fault, with the nonce to use next.
    const bad = await strict.authenticate(dpopRequest(token, await proof(key, token, { claims: { nonce, htm: 'GET' } })));
    expect(bad.denial).toMatchObject({ kind: 'invalid_dpop_proof', headers: { 'dpop-nonce': nonce } });
  });

  it('an opaque token bound by its introspection answer (cnf.jkt) takes a proof too', async () => {
    const withIntrospection = await createResourceServer({ issuer, resource: RESOURCE, introspection: { url: `${issuer}/introspect`, clientId: 'rs', clientSecret: 's' } });
    introspected = { active: true, iss: issuer, aud: RESOURCE, sub: 'bob', scope: 'mcp', cnf: { jkt: key.jkt } };
    try {
      const opaque = 'opaque-token-0123456789';
      expect((await withIntrospection.authenticate(dpopRequest(opaque, await proof(key, opaque)))).caller).toMatchObject({ sub: 'bob', scheme: 'DPoP' });
      expect((await withIntrospection.authenticate(dpopRequest(opaque, await proof(await clientKey(), opaque)))).denial).toMatchObject({ kind: 'invalid_dpop_proof' });
      expect((await withIntrospection.authenticate(request({ authorization: `Bearer ${opaque}` }))).denial).toMatchObject({ kind: 'sender_constrained' });
    } finally {
      introspected = { active: false };
    }
  });
});

describe('keys in rotation', () => {
  it('a token of a key id not fetched yet: 503 with Retry-After while the keys may not be fetched again, then accepted', async () => {
    const server = await createResourceServer({ issuer, resource: RESOURCE, jwksCooldownMs: 1500 });
    const fetched = jwksFetches;
    await newSigningKey();
    const token = await accessToken();
    const { denial } = await server.authenticate(request({ authorization: `Bearer ${token}` }));
    expect(denial).toMatchObject({ status: 503, kind: 'keys_rotating', headers: { 'retry-after': '2' } });
    expect(denial!.challenge).toBeUndefined();
    expect(jwksFetches).toBe(fetched);
    // A known key id with a bad signature is the token's fault, cool-down or not.
    const [head, body] = token.split('.');
    const tampered = `${head}.${body}.${base64url.encode(new Uint8Array(64))}`;
    const old = signing[1]!;
    const oldKid = `${base64url.encode(JSON.stringify({ alg: 'ES256', kid: old.kid }))}.${body}.${tampered.split('.')[2]}`;
    expect((await server.authenticate(request({ authorization: `Bearer ${oldKid}` }))).denial).toMatchObject({ status: 401, kind: 'invalid_token' });
    await new Promise((resolve) => setTimeout(resolve, 1600));
    expect((await server.authenticate(request({ authorization: `Bearer ${token}` }))).caller).toMatchObject({ sub: 'alice' });
    expect(jwksFetches).toBe(fetched + 1);
    // After a fetch, a key id still unknown is the token's fault.
    const stranger = await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'stranger' }).sign((await generateKeyPair('ES256')).privateKey);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    expect((await server.authenticate(request({ authorization: `Bearer ${stranger}` }))).denial).toMatchObject({ status: 401, kind: 'invalid_token' });
  });
});

describe('introspection credentials in HTTP Basic', () => {
  const secret = 'se+cr/et=:x';
  const basic = (id: string, password: string) => `Basic ${Buffer.from(`${id}:${password}`).toString('base64')}`;
  const client = () => ({ url: `${issuer}/introspect`, clientId: 'twylt-mcp', clientSecret: secret });
  const seen: string[] = [];
  const accepting = (expected: string) => (authorization: string) => {
    seen.push(authorization);
    return authorization === expected;
  };
  afterAll(() => {
    acceptBasic = () => true;
  });

  it('a server that takes them only as they are (Glewlwyd): tried form-encoded, then raw, which is kept', async () => {
    acceptBasic = accepting(basic('twylt-mcp', secret));
    seen.length = 0;
    const server = await createResourceServer({ issuer, resource: RESOURCE, introspection: client() });
    expect(seen).toEqual([basic('twylt-mcp', encodeURIComponent(secret)), basic('twylt-mcp', secret)]);
    introspected = { active: true, iss: issuer, aud: RESOURCE, sub: 'carol' };
    try {
      expect((await server.authenticate(request({ authorization: 'Bearer opaque-1' }))).caller).toMatchObject({ sub: 'carol' });
    } finally {
      introspected = { active: false };
    }
    expect(seen.at(-1)).toBe(basic('twylt-mcp', secret));
  });

  it('a server that takes them only form-encoded (RFC 6749): once, form-encoded; a wrong secret is refused in both forms', async () => {
    acceptBasic = accepting(basic('twylt-mcp', encodeURIComponent(secret)));
    seen.length = 0;
    await createResourceServer({ issuer, resource: RESOURCE, introspection: client() });
    expect(seen).toEqual([basic('twylt-mcp', encodeURIComponent(secret))]);
    acceptBasic = () => false;
    await expect(createResourceServer({ issuer, resource: RESOURCE, introspection: client() })).rejects.toThrow(
      /refused the client "twylt-mcp" \(HTTP 401, with the credentials form-encoded and as they are\)/,
    );
  });

  it('the choice given: raw only, no retry', async () => {
    acceptBasic = accepting(basic('twylt-mcp', encodeURIComponent(secret)));
    seen.length = 0;
    await expect(createResourceServer({ issuer, resource: RESOURCE, introspection: { ...client(), credentials: 'raw' } })).rejects.toThrow(/HTTP 401\)/);
    expect(seen).toEqual([basic('twylt-mcp', secret)]);
  });
});

/** `token` with alg none and no signature. */
function unsigned(token: string): string {
  const [, payload] = token.split('.');
  return `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'dpop+jwt' }))}.${payload}.`;
}
