/**
 * Every rule of the OAuth resource server (packages/twylt/src/server/oauth), one row each, in
 * process against a fake authorization server on 127.0.0.1: discovery and its refusals,
 * introspection (the request it sends, the answers it refuses, its cache), each accepted
 * signature algorithm and each token fault jose reports (401, never 503), the checks of an
 * introspection answer, the challenges (scopes, quoting, the 2048-character cap), and what
 * stops the start. The rows are what mutation testing (docs/mutation.md) needed to kill the
 * module's mutants: each asserts the exact outcome, not only that something failed.
 */
import { KeyObject, sign } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompactSign, exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverIssuer, OAuthSetupError } from '../../packages/twylt/src/server/oauth/discovery.js';
import { introspect, IntrospectionCache, IntrospectionError, MAX_CACHED_ANSWERS } from '../../packages/twylt/src/server/oauth/introspection.js';
import { createResourceServer, DEFAULT_JWKS_COOLDOWN_MS, MAX_CHALLENGE_SCOPE_CHARS } from '../../packages/twylt/src/server/oauth/resource-server.js';
import { authServerUrl, issuerMetadataUrls, resourceMetadataUrl, resourceUrl } from '../../packages/twylt/src/server/oauth/urls.js';

/** What the fake authorization server answers for one path. */
interface Answer {
  status?: number;
  json?: unknown;
  raw?: string;
  location?: string;
}
interface Seen {
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let http: Server;
let origin = '';
/** The answer for each path; a function may look at the request. */
const routes = new Map<string, Answer | ((seen: Seen) => Answer)>();
const seen: Seen[] = [];

beforeAll(async () => {
  http = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const entry: Seen = { url: request.url ?? '', headers: request.headers, body };
      seen.push(entry);
      const route = routes.get(entry.url);
      const answer = typeof route === 'function' ? route(entry) : (route ?? { status: 404, json: { error: 'not found' } });
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (answer.location) headers.location = answer.location;
      response.writeHead(answer.status ?? 200, headers).end(answer.raw ?? JSON.stringify(answer.json ?? {}));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())));

/** The error `promise` rejects with; fails the test when it resolves. */
async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('discovering the issuer', () => {
  it('tries each well-known URL in turn, asking for JSON, and says what each answered', async () => {
    const issuer = `${origin}/realms/a`;
    const [oauth, inserted, appended] = issuerMetadataUrls(issuer).map((url) => new URL(url).pathname);
    routes.set(oauth!, { status: 304 }); // no body at all: nothing to cancel
    routes.set(inserted!, { raw: 'not json' });
    routes.set(appended!, { status: 302, location: `${origin}/elsewhere` });
    const error = await failure(discoverIssuer(issuer, 5000));
    expect(error).toBeInstanceOf(OAuthSetupError);
    expect(error.name).toBe('OAuthSetupError');
    const lines = error.message.split('\n');
    expect(lines[0]).toBe(`cannot discover the authorization server ${issuer}:`);
    expect(lines[1]).toBe(`  ${origin}${oauth}: HTTP 304`);
    expect(lines[2]).toBe(`  ${origin}${inserted}: not JSON`);
    // Redirects are refused (redirect: 'error'), and the cause is named.
    expect(lines[3]).toMatch(new RegExp(`^  ${origin}${appended}: .*redirect`, 'i'));
    expect(lines).toHaveLength(4);
    expect(seen.find((entry) => entry.url === oauth)?.headers.accept).toBe('application/json');
    expect(seen.some((entry) => entry.url === '/elsewhere')).toBe(false);
  });

  it('an unreachable issuer: the cause (ECONNREFUSED) for each URL', async () => {
    const issuer = `http://127.0.0.1:${await closedPort()}`;
    const error = await failure(discoverIssuer(issuer, 5000));
    expect(error.message.split('\n').slice(1)).toEqual(issuerMetadataUrls(issuer).map((url) => expect.stringMatching(new RegExp(`^  ${url}: connect ECONNREFUSED`))));
  });

  const refusals: [string, unknown, RegExp | string][] = [
    ['an array', [], 'is not a JSON object'],
    ['null', 'null', 'is not a JSON object'],
    ['a string', 'issuer', 'is not a JSON object'],
    ['another issuer', { issuer: 'https://other.example' }, /names the issuer "https:\/\/other.example", not "http:\/\/127.0.0.1:\d+\/r-issuer"; give --auth-issuer exactly as the server names itself/],
    ['a jwks_uri in clear text', { jwks_uri: 'http://keys.example/certs' }, /: jwks_uri "http:\/\/keys.example\/certs" must be an https URL/],
    ['an introspection endpoint in clear text', { introspection_endpoint: 'http://keys.example/introspect' }, /: introspection_endpoint "http:\/\/keys.example\/introspect" must be an https URL/],
  ];
  for (const [what, metadata, message] of refusals) {
    it(`refuses metadata that is ${what}`, async () => {
      const issuer = `${origin}/r-${what.split(' ').at(-1)}`;
      const url = issuerMetadataUrls(issuer)[0]!;
      // A string is sent as it is (`null`, `issuer`: raw JSON text or not JSON at all).
      routes.set(new URL(url).pathname, typeof metadata === 'string' ? { raw: metadata === 'issuer' ? '"issuer"' : metadata } : { json: Array.isArray(metadata) ? metadata : { issuer, ...(metadata as object) } });
      const error = await failure(discoverIssuer(issuer, 5000));
      expect(error).toBeInstanceOf(OAuthSetupError);
      expect(error.message.startsWith(url)).toBe(true);
      if (typeof message === 'string') expect(error.message).toBe(`${url} ${message}`);
      else expect(error.message).toMatch(message);
    });
  }

  it('takes the issuer, its jwks_uri and introspection endpoint (https, or http on loopback)', async () => {
    const issuer = `${origin}/r-good`;
    routes.set(new URL(issuerMetadataUrls(issuer)[0]!).pathname, { json: { issuer, jwks_uri: 'https://keys.example/certs', introspection_endpoint: `${origin}/introspect`, other: 1 } });
    expect(await discoverIssuer(issuer, 5000)).toEqual({ issuer, jwks_uri: 'https://keys.example/certs', introspection_endpoint: `${origin}/introspect` });
  });
});

describe('URLs', () => {
  it('an authorization server: https, or http on loopback; never another scheme', () => {
    expect(() => authServerUrl('ftp://127.0.0.1/x')).toThrow(/must be an https URL/);
    expect(authServerUrl('http://[::1]:8080/').port).toBe('8080');
    expect(() => authServerUrl('https://sso.example.com/#x')).toThrow(/query or a fragment/);
  });

  it('a resource: absolute, without a fragment', () => {
    expect(resourceUrl('https://mcp.example.com/mcp')).toBe('https://mcp.example.com/mcp');
    expect(() => resourceUrl('https://mcp.example.com/mcp#x')).toThrow('"https://mcp.example.com/mcp#x" must not have a fragment');
    expect(() => resourceUrl('/mcp')).toThrow('"/mcp" is not a URL');
  });

  it('a trailing slash is no part of the path', () => {
    expect(resourceMetadataUrl('https://mcp.example.com/mcp/')).toBe('https://mcp.example.com/.well-known/oauth-protected-resource/mcp');
    expect(issuerMetadataUrls('https://sso.example.com/realms/acme/')).toEqual(issuerMetadataUrls('https://sso.example.com/realms/acme'));
  });
});

describe('introspection', () => {
  const client = () => ({ url: `${origin}/introspect`, clientId: 'my client:1', clientSecret: 'p@ss word' });

  it('posts the token as a form, with the client as HTTP Basic (form-encoded first), asking for JSON', async () => {
    routes.set('/introspect', { json: { active: true, sub: 'u' } });
    expect(await introspect('the-token', client(), 5000)).toEqual({ active: true, sub: 'u' });
    const request = seen.filter((entry) => entry.url === '/introspect').at(-1)!;
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from('my%20client%3A1:p%40ss%20word').toString('base64')}`);
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request.headers.accept).toBe('application/json');
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({ token: 'the-token', token_type_hint: 'access_token' });
  });

  it('an answer without a body (304): an IntrospectionError with the status', async () => {
    routes.set('/introspect', { status: 304 });
    const error = (await failure(introspect('t', client(), 5000))) as IntrospectionError;
    expect(error).toBeInstanceOf(IntrospectionError);
    expect([error.status, error.message]).toEqual([304, `introspection at ${origin}/introspect answered HTTP 304`]);
  });

  it('an HTTP error: an IntrospectionError with the status', async () => {
    routes.set('/introspect', { status: 401, json: { error: 'invalid_client' } });
    const error = (await failure(introspect('t', client(), 5000))) as IntrospectionError;
    expect(error).toBeInstanceOf(IntrospectionError);
    expect(error.name).toBe('IntrospectionError');
    expect(error.status).toBe(401);
    expect(error.message).toBe(`introspection at ${origin}/introspect answered HTTP 401`);
  });

  for (const [what, answer] of [
    ['not JSON', { raw: '<html>' }],
    ['null', { raw: 'null' }],
    ['an array', { json: [] }],
    ['an object without active', { json: { sub: 'u' } }],
    ['active as a string', { json: { active: 'true' } }],
  ] as const) {
    it(`an answer that is ${what}: an IntrospectionError, no status`, async () => {
      routes.set('/introspect', answer);
      const error = (await failure(introspect('t', client(), 5000))) as IntrospectionError;
      expect(error).toBeInstanceOf(IntrospectionError);
      expect(error.status).toBeUndefined();
      expect(error.message).toBe(`introspection at ${origin}/introspect answered no {"active": true|false} object`);
    });
  }

  it('an unreachable endpoint: the cause, no status', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/introspect`;
    const error = (await failure(introspect('t', { ...client(), url }, 5000))) as IntrospectionError;
    expect(error).toBeInstanceOf(IntrospectionError);
    expect(error.status).toBeUndefined();
    expect(error.message).toMatch(new RegExp(`^introspection at ${url} failed: connect ECONNREFUSED`));
  });
});

describe('the introspection cache', () => {
  const answer = { active: true };

  it('keeps an answer for its time, up to the token\'s expiry, and not at all past it', () => {
    const cache = new IntrospectionCache(1000);
    cache.set('a', answer, undefined, 0);
    expect(cache.get('a', 999)).toBe(answer);
    expect(cache.get('a', 1000)).toBeUndefined(); // kept until, not through, its time
    expect(cache.size).toBe(0); // and dropped once found stale
    cache.set('b', answer, 500, 0);
    expect(cache.get('b', 499)).toBe(answer);
    expect(cache.get('b', 500)).toBeUndefined();
    cache.set('c', answer, 0, 0); // expires now: never kept
    cache.set('d', answer, -5, 0);
    expect(cache.size).toBe(0);
    expect(cache.get('unknown', 0)).toBeUndefined();
  });

  it(`holds ${MAX_CACHED_ANSWERS} answers at most: the stale ones go first, else the oldest`, () => {
    const cache = new IntrospectionCache(1000);
    cache.set('t1', answer, undefined, 0);
    cache.set('short', answer, 20, 0);
    for (let i = 2; i < MAX_CACHED_ANSWERS; i++) cache.set(`t${i}`, answer, undefined, 0);
    expect(cache.size).toBe(MAX_CACHED_ANSWERS);
    cache.set('next', answer, undefined, 20); // `short` is stale at 20 (until, not through): it goes, nothing else
    expect(cache.size).toBe(MAX_CACHED_ANSWERS);
    expect(cache.get('t1', 20)).toBe(answer);
    expect(cache.get('short', 0)).toBeUndefined();
    expect(cache.get('next', 20)).toBe(answer);
    cache.set('last', answer, undefined, 20); // none stale: the oldest (t1) goes
    expect(cache.size).toBe(MAX_CACHED_ANSWERS);
    expect(cache.get('t1', 20)).toBeUndefined();
    expect(cache.get('t2', 20)).toBe(answer);
    expect(cache.get('last', 20)).toBe(answer);
  });
});

describe('a resource server', () => {
  const resource = 'https://mcp.example.com/mcp';
  let issuer = '';
  const privateKeys = new Map<string, CryptoKey>();
  /** Introspection answers by token; an unknown token is inactive. */
  const answers = new Map<string, Record<string, unknown> | 'fail'>();
  const introspected: string[] = [];
  const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
  const now = () => Math.floor(Date.now() / 1000);
  /** The second challenge after every Bearer one (ADR 0040). */
  const DPOP_CHALLENGE = 'DPoP algs="ES256 ES384 ES512 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA Ed25519"';
  const introspection = () => ({ url: `${origin}/rs/introspect`, clientId: 'bridge', clientSecret: 's' });

  beforeAll(async () => {
    issuer = `${origin}/rs`;
    const keys = [];
    for (const alg of [...ALGORITHMS, 'stranger']) {
      const pair = await generateKeyPair(alg === 'stranger' ? 'ES256' : alg);
      privateKeys.set(alg, pair.privateKey);
      if (alg !== 'stranger') keys.push({ ...(await exportJWK(pair.publicKey)), kid: alg, alg: alg === 'EdDSA' ? 'EdDSA' : alg, use: 'sig' });
    }
    routes.set('/.well-known/oauth-authorization-server/rs', { json: { issuer, jwks_uri: `${origin}/rs/certs` } });
    routes.set('/rs/certs', { json: { keys } });
    routes.set('/rs/introspect', (request) => {
      const token = new URLSearchParams(request.body).get('token') ?? '';
      introspected.push(token);
      const answer = answers.get(token);
      if (answer === 'fail') return { status: 500, json: {} };
      return { json: answer ?? { active: false } };
    });
  });

  /** A JWT for `resource` from `issuer`, signed with `alg`'s key (kid `alg`), valid for an hour. */
  function jwt(alg: string, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}): Promise<string> {
    const body = { iss: issuer, aud: resource, sub: 'user-1', scope: 'mcp', exp: now() + 3600, ...claims };
    for (const [key, value] of Object.entries(body)) if (value === undefined) delete body[key as keyof typeof body];
    return new SignJWT(body).setProtectedHeader({ alg, kid: alg, ...header }).sign(privateKeys.get(header.kid === 'stranger' ? 'stranger' : alg)!);
  }
  /** A JWS that jose would not sign (an unknown critical header), signed with node:crypto. */
  function signedByHand(header: Record<string, unknown>): string {
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const input = `${part(header)}.${part({ iss: issuer, aud: resource, exp: now() + 60 })}`;
    const signature = sign('sha256', Buffer.from(input), { key: KeyObject.from(privateKeys.get('ES256')!), dsaEncoding: 'ieee-p1363' });
    return `${input}.${signature.toString('base64url')}`;
  }
  const request = (authorization?: string) => ({ headers: authorization === undefined ? {} : { authorization } }) as IncomingMessage;
  const bearer = (token: string) => request(`Bearer ${token}`);

  for (const alg of ALGORITHMS) {
    it(`accepts a token signed with ${alg}`, async () => {
      const server = await createResourceServer({ issuer, resource });
      expect(await server.authenticate(bearer(await jwt(alg)))).toEqual({ caller: { sub: 'user-1', clientId: undefined, scopes: ['mcp'], scheme: 'Bearer' } });
    });
  }

  it('refuses, as the token\'s fault (401 invalid_token, never 503), each fault jose reports', async () => {
    const server = await createResourceServer({ issuer, resource });
    const otherKey = (await generateKeyPair('RS256')).privateKey;
    const forged = await new SignJWT({ iss: issuer, aud: resource, exp: now() + 60 }).setProtectedHeader({ alg: 'RS256', kid: 'RS256' }).sign(otherKey);
    const notJson = await new CompactSign(new TextEncoder().encode('not a claims set')).setProtectedHeader({ alg: 'ES256', kid: 'ES256' }).sign(privateKeys.get('ES256')!);
    const hmac = await new SignJWT({ iss: issuer, aud: resource, exp: now() + 60 }).setProtectedHeader({ alg: 'HS256', kid: 'RS256' }).sign(new TextEncoder().encode('k'.repeat(32)));
    const cases: [string, string, RegExp][] = [
      ['expired (ERR_JWT_EXPIRED)', await jwt('ES256', { exp: now() - 3600 }), /"exp" claim timestamp check failed/],
      ['another audience (ERR_JWT_CLAIM_VALIDATION_FAILED)', await jwt('ES256', { aud: 'https://other.example' }), /unexpected "aud" claim value/],
      ['without exp (a required claim)', await jwt('ES256', { exp: undefined }), /missing required "exp" claim/],
      ['signed by another key (ERR_JWS_SIGNATURE_VERIFICATION_FAILED)', forged, /signature verification failed/],
      ['a payload that is no claims set (ERR_JWT_INVALID)', notJson, /JWT Claims Set must be a top-level JSON object/],
      ['an HMAC algorithm (ERR_JOSE_ALG_NOT_ALLOWED)', hmac, /"alg" \(Algorithm\) Header Parameter value not allowed/],
      ['an unknown critical header (ERR_JOSE_NOT_SUPPORTED)', signedByHand({ alg: 'ES256', kid: 'ES256', crit: ['x-new'], 'x-new': 1 }), /Extension Header Parameter "x-new" is not recognized/],
      ['a JWS without an algorithm (ERR_JWS_INVALID)', 'e30.e30.c2ln', /"alg" \(Algorithm\) Header Parameter missing or invalid/],
      ['a JWS whose header is not JSON (ERR_JWS_INVALID)', 'aaaa.e30.c2ln', /JWS Protected Header is invalid/],
      ['a JWS with an empty signature', 'eyJhbGciOiJFUzI1NiIsImtpZCI6IkVTMjU2In0.e30.', /signature/i],
    ];
    for (const [what, token, reason] of cases) {
      const { denial } = await server.authenticate(bearer(token));
      expect(denial, what).toMatchObject({ status: 401, kind: 'invalid_token' });
      expect(denial!.reason, what).toMatch(reason);
      expect(denial!.challenge, what).toMatch(/^Bearer resource_metadata="https:\/\/mcp\.example\.com\/\.well-known\/oauth-protected-resource\/mcp", error="invalid_token", error_description="/);
      expect(denial!.challenge, what).toMatch(/", DPoP algs="ES256 ES384 ES512 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA Ed25519"$/);
    }
  });

  it('an unknown key id (ERR_JWKS_NO_MATCHING_KEY) within the refetch cool-down: 503 keys_rotating with Retry-After, no challenge (ADR 0040)', async () => {
    const server = await createResourceServer({ issuer, resource });
    const retryAfter = String(DEFAULT_JWKS_COOLDOWN_MS / 1000);
    expect((await server.authenticate(bearer(await jwt('ES256', {}, { kid: 'stranger' })))).denial).toEqual({
      status: 503,
      kind: 'keys_rotating',
      reason: 'the access token is signed by a key not known yet (the authorization server is rotating its keys?); try again later',
      detail: `a key id not in the keys of ${issuer}: they are fetched again within ${retryAfter} s`,
      headers: { 'retry-after': retryAfter },
    });
  });

  it('names the caller by sub (a string only) and client_id before azp', async () => {
    const server = await createResourceServer({ issuer, resource });
    expect((await server.authenticate(bearer(await jwt('ES256', { sub: 42, client_id: 'c1', azp: 'a1' })))).caller).toEqual({ sub: undefined, clientId: 'c1', scopes: ['mcp'], scheme: 'Bearer' });
    expect((await server.authenticate(bearer(await jwt('ES256', { azp: 'a1', scope: undefined, scp: ['x'] })))).caller).toEqual({ sub: 'user-1', clientId: 'a1', scopes: ['x'], scheme: 'Bearer' });
  });

  it('no token, another scheme, and DPoP: the challenges, exactly', async () => {
    const server = await createResourceServer({ issuer, resource, requiredScopes: ['mcp', 'mcp'] });
    const metadata = 'resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"';
    for (const authorization of [undefined, 'Basic dXNlcjpwYXNz', 'NotDPoP abc']) {
      expect((await server.authenticate(request(authorization))).denial).toEqual({
        status: 401,
        kind: 'missing_token',
        reason: 'an access token is required (Bearer, or DPoP with a proof)',
        challenge: `Bearer ${metadata}, scope="mcp", ${DPOP_CHALLENGE}`,
      });
    }
    const dpop = (await server.authenticate(request('DPoP eyJ.abc.def'))).denial!;
    // The DPoP scheme is checked now (ADR 0040): a token that is no JWS is invalid, with the DPoP challenge first.
    expect(dpop.status).toBe(401);
    expect(dpop.kind).toBe('invalid_token');
    expect(dpop.reason).toBe('invalid token: JWS Protected Header is invalid');
    expect(dpop.challenge).toBe(`${DPOP_CHALLENGE}, ${metadata}, error="invalid_token", error_description="${dpop.reason.slice('invalid token: '.length)}", scope="mcp"`);
    // A DPoP-bound token sent as a bearer token stays refused as sender-constrained.
    const bound = (await server.authenticate(bearer(await jwt('ES256', { cnf: { jkt: 'x' } })))).denial!;
    expect(bound.status).toBe(401);
    expect(bound.kind).toBe('sender_constrained');
    expect(bound.reason).toBe('invalid token: a DPoP-bound token (cnf.jkt) must be sent with the DPoP scheme and a proof of its key, not as a bearer token');
    expect(bound.challenge).toBe(`Bearer ${metadata}, error="invalid_token", error_description="${bound.reason.slice('invalid token: '.length)}", scope="mcp", ${DPOP_CHALLENGE}`);
    const none = await createResourceServer({ issuer, resource });
    expect((await none.authenticate(request())).denial?.challenge).toBe(`Bearer ${metadata}, ${DPOP_CHALLENGE}`);
  });

  it('a token without a required scope: 403 naming it, the caller still named', async () => {
    const server = await createResourceServer({ issuer, resource, requiredScopes: ['mcp', 'admin'], offeredScopes: () => ['tools:a', 'tools:b'] });
    const result = await server.authenticate(bearer(await jwt('ES256', { scope: 'mcp tools:b' })));
    expect(result.caller).toEqual({ sub: 'user-1', clientId: undefined, scopes: ['mcp', 'tools:b'], scheme: 'Bearer' });
    expect(result.denial).toEqual({
      status: 403,
      kind: 'insufficient_scope',
      reason: 'the token lacks the scope admin',
      challenge: 'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="mcp admin tools:b", ' + DPOP_CHALLENGE,
    });
    expect(server.insufficientScope({}, ['tools:c'], 'no').challenge).toBe(
      'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="mcp admin tools:c", ' + DPOP_CHALLENGE,
    );
    expect((await server.authenticate(bearer(await jwt('ES256', { scope: 'admin mcp' })))).denial).toBeUndefined();
    expect((await server.authenticate(bearer(await jwt('ES256', { scope: 'other' })))).denial?.reason).toBe('the token lacks the scope mcp admin');
  });

  it('a challenge quotes safely: quotes and backslashes become \', anything but printable ASCII ?', async () => {
    const server = await createResourceServer({ issuer, resource, offeredScopes: () => ['a"b', 'c\\d', 'caf\u00e9', 'tab\there'] });
    expect((await server.authenticate(request())).denial?.challenge).toBe(
      `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="a'b c'd caf? tab?here", ${DPOP_CHALLENGE}`,
    );
  });

  it(`the scopes a 401 offers fit in ${MAX_CHALLENGE_SCOPE_CHARS} characters exactly, each once, the required first`, async () => {
    const fill = 'x'.repeat(MAX_CHALLENGE_SCOPE_CHARS - 'mcp'.length - 1 - 2); // "mcp " + fill + " y" is exactly the cap
    const server = await createResourceServer({ issuer, resource, requiredScopes: ['mcp'], offeredScopes: () => ['mcp', fill, 'y', 'z'] });
    const scope = /scope="([^"]*)"/.exec((await server.authenticate(request())).denial!.challenge!)![1]!;
    expect(scope).toBe(`mcp ${fill} y`);
    expect(scope.length).toBe(MAX_CHALLENGE_SCOPE_CHARS);
    // The required words count with their spaces: one character more than fits is left out.
    const over = 'o'.repeat(MAX_CHALLENGE_SCOPE_CHARS - 'r1 r2'.length); // "r1 r2 " + over is one too many
    const capped = await createResourceServer({ issuer, resource, requiredScopes: ['r1', 'r2'], offeredScopes: () => [over] });
    expect((await capped.authenticate(request())).denial!.challenge).toMatch(/, scope="r1 r2", DPoP algs="ES256 ES384 ES512 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA Ed25519"$/);
  });

  it('fetches the keys once at the start, and not again for a known key within their age', async () => {
    const fetches = () => seen.filter((entry) => entry.url === '/rs/certs').length;
    const server = await createResourceServer({ issuer, resource });
    const before = fetches();
    for (let i = 0; i < 3; i++) expect((await server.authenticate(bearer(await jwt('ES384')))).caller?.sub).toBe('user-1');
    expect(fetches()).toBe(before);
  });

  it('publishes its metadata (RFC 9728)', async () => {
    const server = await createResourceServer({ issuer, resource, requiredScopes: ['mcp'], offeredScopes: () => ['mcp', 'tools:a'] });
    expect(server.metadata()).toEqual({
      resource,
      authorization_servers: [issuer],
      scopes_supported: ['mcp', 'tools:a'],
      bearer_methods_supported: ['header'],
      dpop_signing_alg_values_supported: ['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA', 'Ed25519'],
      resource_name: 'twylt-mcp',
    });
    expect(server.metadataUrl).toBe('https://mcp.example.com/.well-known/oauth-protected-resource/mcp');
    expect([server.issuer, server.resource]).toEqual([issuer, resource]);
  });

  it('an opaque token: refused without an introspection endpoint, whatever it looks like', async () => {
    const server = await createResourceServer({ issuer, resource });
    for (const token of ['opaque-token', '%.a.b.c', 'a.b.c.%', 'a.b.c.d.e']) {
      expect((await server.authenticate(bearer(token))).denial?.reason).toBe('invalid token: not a JWT, and opaque tokens are not accepted here (no introspection endpoint configured)');
    }
  });

  it('an opaque token is checked at introspection as jwtVerify checks a JWT: each rule, with its leeway', async () => {
    answers.set('', { active: false });
    const server = await createResourceServer({ issuer, resource, introspection: introspection() });
    expect(introspected.at(-1)).toMatch(/^twylt-start-up-check-[0-9a-f]{32}$/);
    const base = { active: true, iss: issuer, aud: resource, sub: 'u' };
    const cases: [string, Record<string, unknown> | 'fail', string | undefined][] = [
      ['valid', base, undefined],
      ['inactive', { ...base, active: false }, 'the authorization server says it is not active'],
      ['another issuer', { ...base, iss: 'https://other.example' }, 'unexpected "iss" in the introspection answer'],
      ['no issuer', { ...base, iss: undefined }, undefined],
      ['an audience list with ours', { ...base, aud: ['x', resource] }, undefined],
      ['an audience list without ours', { ...base, aud: ['x'] }, `its audience is not ${resource}`],
      ['another audience', { ...base, aud: 'x' }, `its audience is not ${resource}`],
      ['no audience', { ...base, aud: undefined }, `its audience is not ${resource}`],
      ['expired within the leeway', { ...base, exp: now() - 10 }, undefined],
      ['expired', { ...base, exp: now() - 100 }, 'it has expired'],
      ['an exp that is no number', { ...base, exp: '1' }, undefined],
      ['valid soon, within the leeway', { ...base, nbf: now() + 10 }, undefined],
      ['not valid yet', { ...base, nbf: now() + 100 }, 'it is not valid yet'],
      ['an nbf that is no number', { ...base, nbf: String(now() + 100) }, undefined],
    ];
    for (const [what, answer, problem] of cases) {
      const token = `opaque-${what.replaceAll(' ', '-')}`;
      answers.set(token, answer);
      const result = await server.authenticate(bearer(token));
      if (problem === undefined) expect(result, what).toEqual({ caller: { sub: 'u', clientId: undefined, scopes: [], scheme: 'Bearer' } });
      else expect(result.denial, what).toMatchObject({ status: 401, kind: 'invalid_token', reason: `invalid token: ${problem}` });
    }
    answers.set('opaque-down', 'fail');
    expect((await server.authenticate(bearer('opaque-down'))).denial).toEqual({
      status: 503,
      kind: 'introspection_unavailable',
      reason: 'the access token cannot be checked now (the authorization server is unavailable); try again later',
      detail: `introspection at ${origin}/rs/introspect answered HTTP 500`,
    });
  });

  it('a JWT introspected too: each answer kept for its time but never past its exp; inactive refused; a failure is 503', async () => {
    const server = await createResourceServer({ issuer, resource, introspection: introspection(), introspectJwtSeconds: 300 });
    const lasting = await jwt('ES256', { jti: 'lasting' });
    answers.set(lasting, { active: true, exp: now() + 3600 });
    const before = introspected.length;
    await server.authenticate(bearer(lasting));
    expect((await server.authenticate(bearer(lasting))).caller?.sub).toBe('user-1');
    expect(introspected.length - before).toBe(1);
    const ending = await jwt('ES256', { jti: 'ending' });
    answers.set(ending, { active: true, exp: now() - 1 });
    await server.authenticate(bearer(ending));
    await server.authenticate(bearer(ending));
    expect(introspected.filter((token) => token === ending)).toHaveLength(2);
    const revoked = await jwt('ES256', { jti: 'revoked' });
    answers.set(revoked, { active: false });
    expect((await server.authenticate(bearer(revoked))).denial?.reason).toBe('invalid token: the authorization server says it is not active (revoked?)');
    const down = await jwt('ES256', { jti: 'down' });
    answers.set(down, 'fail');
    expect((await server.authenticate(bearer(down))).denial).toMatchObject({ status: 503, kind: 'introspection_unavailable' });
  });

  it('keys only through introspection: a JWT-shaped token is introspected when the issuer publishes no jwks_uri', async () => {
    routes.set('/.well-known/oauth-authorization-server/opaque-only', { json: { issuer: `${origin}/opaque-only` } });
    const server = await createResourceServer({ issuer: `${origin}/opaque-only`, resource, introspection: introspection() });
    const token = await jwt('ES256');
    answers.set(token, { active: true, aud: resource, sub: 'via-introspection' });
    expect((await server.authenticate(bearer(token))).caller?.sub).toBe('via-introspection');
  });

  it('stops the start when it cannot work: each reason, said plainly', async () => {
    await expect(createResourceServer({ issuer: 'http://sso.example.com/realms/x', resource })).rejects.toThrow(
      new RangeError('"http://sso.example.com/realms/x" must be an https URL (http only on a loopback address): tokens and keys must not travel in clear text'),
    );
    await expect(createResourceServer({ issuer, resource, introspectJwtSeconds: 5 })).rejects.toThrow(
      new OAuthSetupError('introspecting JWTs needs an introspection endpoint (--auth-introspection)'),
    );
    await expect(createResourceServer({ issuer, resource, introspection: { ...introspection(), url: 'http://sso.example.com/introspect' } })).rejects.toThrow(RangeError);
    await expect(createResourceServer({ issuer, resource: 'https://mcp.example.com/#x' })).rejects.toThrow(/must not have a fragment/);
    routes.set('/.well-known/oauth-authorization-server/nokeys', { json: { issuer: `${origin}/nokeys` } });
    await expect(createResourceServer({ issuer: `${origin}/nokeys`, resource })).rejects.toThrow(
      `${origin}/nokeys publishes no jwks_uri, so its tokens cannot be checked here; give --auth-introspection URL for opaque tokens`,
    );
    routes.set('/.well-known/oauth-authorization-server/badkeys', { json: { issuer: `${origin}/badkeys`, jwks_uri: `${origin}/badkeys/certs` } });
    routes.set('/badkeys/certs', { status: 500, json: {} });
    await expect(createResourceServer({ issuer: `${origin}/badkeys`, resource })).rejects.toThrow(new RegExp(`^cannot fetch the keys of ${origin}/badkeys from ${origin}/badkeys/certs: `));
    for (const status of [401, 403]) {
      routes.set('/refusing/introspect', { status, json: {} });
      const refusing = { ...introspection(), url: `${origin}/refusing/introspect` };
      const error = await failure(createResourceServer({ issuer, resource, introspection: refusing }));
      expect(error).toBeInstanceOf(OAuthSetupError);
      expect(error.message).toBe(
        `the introspection endpoint ${origin}/refusing/introspect refused the client "bridge" (HTTP ${status}): check the client_id and client_secret of --auth-client-file, and that this client may introspect tokens`,
      );
    }
    const unreachable = { ...introspection(), url: `http://127.0.0.1:${await closedPort()}/introspect` };
    await expect(createResourceServer({ issuer, resource, introspection: unreachable })).rejects.toThrow(/^cannot use the introspection endpoint: introspection at .* failed: connect ECONNREFUSED/);
    // Any other answer is left to the first real token.
    routes.set('/flaky/introspect', { status: 500, json: {} });
    await expect(createResourceServer({ issuer, resource, introspection: { ...introspection(), url: `${origin}/flaky/introspect` } })).resolves.toBeDefined();
  });
});
