/**
 * A real OAuth 2.1 / OpenID Connect authorization server for the OAuth tests: oidc-provider
 * on 127.0.0.1 (a port the OS picks), with resource indicators (RFC 8707) and JWT access
 * tokens whose `aud` is the resource asked for. It counts the requests for its keys, can
 * rotate its signing key, issues DPoP-bound tokens to a client that asks with a proof, and drives its own login and consent pages for the
 * authorization-code flow the way a browser would.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { Provider } from 'oidc-provider';

/** The scopes an access token for the bridge may carry. */
export const RESOURCE_SCOPES = ['mcp', 'tools:*', 'tools:echo', 'tools:sleeper'];
export const REDIRECT_URI = 'http://127.0.0.1/callback';

/** The registered clients: `machine*` use client credentials, `app` the code flow with PKCE (and gets refresh tokens). */
export const CLIENTS = {
  /** May ask for every scope. */
  machine: { id: 'machine', secret: 'machine-secret-0123456789abcdef' },
  /** Opaque access tokens, for introspection. */
  opaque: { id: 'opaque', secret: 'opaque-secret-0123456789abcdef' },
  /** The bridge's own client at the introspection endpoint. */
  introspector: { id: 'introspector', secret: 'introspector-secret-0123456789' },
  app: { id: 'app' },
} as const;

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface AuthServer {
  /** `http://127.0.0.1:PORT`, as its metadata names itself. */
  issuer: string;
  /** The key it signs access tokens with now. */
  key(): SigningKey;
  /** Requests for its JWKS so far. */
  jwksFetches(): number;
  /** A new signing key, published first in the JWKS (the old one stays published, second). */
  rotate(): Promise<SigningKey>;
  /** An access token by client credentials. */
  clientCredentials(client: { id: string; secret: string }, resource: string, scope: string): Promise<string>;
  /**
   * Sign in as `user` and consent, at the authorization URL a client sent its user to; the
   * answer is the redirect back to the client (with `code` and `state`).
   */
  signIn(authorizationUrl: URL | string, user: string): Promise<URL>;
  close(): Promise<void>;
}

async function newKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = randomBytes(8).toString('hex');
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

export async function startAuthServer(): Promise<AuthServer> {
  const keys: SigningKey[] = [await newKey()];
  let jwksFetches = 0;
  let handler: (request: IncomingMessage, response: ServerResponse) => void = () => {};
  const http: Server = createServer((request, response) => {
    if (new URL(request.url ?? '/', 'http://x').pathname === '/jwks') jwksFetches += 1;
    handler(request, response);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  /** A provider with the keys as they are now; a rotation swaps it in (the grants are kept in memory, shared). */
  const configure = async () => {
    const jwks = { keys: await Promise.all(keys.map(async ({ kid, privateKey }) => ({ ...(await exportJWK(privateKey)), kid, alg: 'ES256', use: 'sig' }))) };
    const provider = new Provider(issuer, {
      clients: [
        { client_id: CLIENTS.machine.id, client_secret: CLIENTS.machine.secret, grant_types: ['client_credentials'], response_types: [], redirect_uris: [] },
        { client_id: CLIENTS.opaque.id, client_secret: CLIENTS.opaque.secret, grant_types: ['client_credentials'], response_types: [], redirect_uris: [] },
        { client_id: CLIENTS.introspector.id, client_secret: CLIENTS.introspector.secret, grant_types: [], response_types: [], redirect_uris: [] },
        { client_id: CLIENTS.app.id, token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], redirect_uris: [REDIRECT_URI] },
      ],
      jwks,
      clientDefaults: { id_token_signed_response_alg: 'ES256' },
      scopes: ['openid', ...RESOURCE_SCOPES],
      cookies: { keys: [randomBytes(16).toString('hex')] },
      // Set, so that oidc-provider does not print a notice for each default it uses.
      ttl: { AccessToken: 300, ClientCredentials: 300, Grant: 600, Interaction: 600, Session: 600 },
      findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
      pkce: { required: () => true },
      // As most providers do for an interactive client: a refresh token, without asking for offline_access.
      issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed('refresh_token'),
      features: {
        devInteractions: { enabled: true },
        clientCredentials: { enabled: true },
        // A client that sends a DPoP proof to /token gets a token bound to its key (cnf.jkt, RFC 9449); others, bearer tokens.
        dPoP: { enabled: true },
        introspection: { enabled: true, allowedPolicy: () => true },
        resourceIndicators: {
          enabled: true,
          defaultResource: (_ctx: unknown, _client: unknown, oneOf?: string) => oneOf,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string, client: { clientId: string }) => ({
            scope: RESOURCE_SCOPES.join(' '),
            audience: resource,
            accessTokenTTL: 300,
            accessTokenFormat: client.clientId === CLIENTS.opaque.id ? 'opaque' : 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          }),
        },
      },
    });
    handler = provider.callback();
  };
  await configure();

  const form = async (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) => {
    const response = await fetch(`${issuer}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    });
    const body = (await response.json()) as Record<string, unknown>;
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(body)}`);
    return body;
  };

  return {
    issuer,
    key: () => keys[0]!,
    jwksFetches: () => jwksFetches,
    async rotate() {
      keys.unshift(await newKey());
      await configure();
      return keys[0]!;
    },
    async clientCredentials(client, resource, scope) {
      const basic = Buffer.from(`${client.id}:${client.secret}`).toString('base64');
      const body = await form('/token', { grant_type: 'client_credentials', resource, scope }, { authorization: `Basic ${basic}` });
      return body.access_token as string;
    },
    async signIn(authorizationUrl, user) {
      const jar = new Map<string, string>();
      const cookieHeader = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
      const keep = (response: Response) => {
        for (const line of response.headers.getSetCookie()) {
          const [pair] = line.split(';');
          const at = pair!.indexOf('=');
          jar.set(pair!.slice(0, at).trim(), pair!.slice(at + 1));
        }
      };
      // Follow redirects by hand, as a browser would, carrying the cookies; stop at the client's redirect_uri.
      let url = new URL(authorizationUrl);
      let signedIn = false;
      let method = 'GET';
      let body: string | undefined;
      for (let step = 0; step < 12; step += 1) {
        if (url.href.startsWith(REDIRECT_URI)) return url;
        const response = await fetch(url, {
          method,
          redirect: 'manual',
          headers: { cookie: cookieHeader(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
          body,
        });
        keep(response);
        await response.arrayBuffer();
        const location = response.headers.get('location');
        if (location) {
          url = new URL(location, url);
          method = 'GET';
          body = undefined;
          continue;
        }
        // A page of devInteractions: the login form first, then the consent form.
        const uid = /\/interaction\/([^/?#]+)/.exec(url.pathname)?.[1];
        if (response.status !== 200 || uid === undefined) throw new Error(`unexpected answer ${response.status} at ${url.href}`);
        method = 'POST';
        body = new URLSearchParams(signedIn ? { prompt: 'consent' } : { prompt: 'login', login: user, password: 'any' }).toString();
        signedIn = true;
      }
      throw new Error('the sign-in took more than 12 steps');
    },
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
