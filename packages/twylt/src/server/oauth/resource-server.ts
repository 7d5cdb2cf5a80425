/**
 * An OAuth 2.1 resource server (ADR 0027): the Authenticator for access tokens that an
 * authorization server the team already runs (Keycloak, Auth0, Okta, Entra ID...) issues.
 * A JWT is checked here, with jose: signature by a key of the issuer's JWKS (asymmetric
 * algorithms only), issuer, audience (this resource, RFC 8707), expiry and not-before
 * with a small leeway, required scopes. An opaque token is asked about at the issuer's
 * introspection endpoint (RFC 7662), and so is a JWT when asked (a revoked JWT is then
 * refused). A token bound to a DPoP key (`cnf.jkt`) is accepted with the `DPoP` scheme and a
 * proof of that key (RFC 9449, dpop.ts), never as a bearer token; one bound to a TLS client
 * certificate (RFC 8705) is refused. The token itself is never logged or kept.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { bearerToken, type Authentication, type Authenticator, type Caller, type Denial } from '../authenticator.js';
import { discoverIssuer, OAuthSetupError } from './discovery.js';
import { DPOP_ALGORITHMS, NonceSource, ProofChecker } from './dpop.js';
import { basicCredentials, introspect, IntrospectionCache, IntrospectionError, type IntrospectionClient } from './introspection.js';
import { scopesOf } from './scopes.js';
import { authServerUrl, resourceMetadataUrl, resourceUrl } from './urls.js';

/** How far a token's `exp` and `nbf` may be off our clock, in seconds. */
export const CLOCK_LEEWAY_SECONDS = 30;
/** After a fetch of the JWKS, how long an unknown `kid` waits before it may fetch again. */
export const DEFAULT_JWKS_COOLDOWN_MS = 30_000;
/** Keys are fetched again once they are this old, unknown `kid` or not. */
const JWKS_MAX_AGE_MS = 10 * 60_000;
/** Each request to the authorization server (metadata, keys, introspection). */
const FETCH_TIMEOUT_MS = 10_000;
/**
 * The longest `scope` a challenge names: clients read headers into bounded buffers (Node's
 * is 16 KiB for all of them). Beyond it, the scopes offered are cut, the needed one kept.
 */
export const MAX_CHALLENGE_SCOPE_CHARS = 2048;
/** What a client is told when the server cannot check its token: no internal address, no detail. */
const UNAVAILABLE_REASON = 'the access token cannot be checked now (the authorization server is unavailable); try again later';
/**
 * The signature algorithms accepted: asymmetric only. `none` signs nothing, and an HMAC
 * key would be the public key itself, which anyone can fetch (the "algorithm confusion" attack).
 */
export const ACCEPTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/**
 * jose's codes for a token that is at fault; any other failure (the key set cannot be
 * fetched, or is not one) is the server's, and the token may be good.
 */
const TOKEN_FAULTS = new Set([
  'ERR_JWT_CLAIM_VALIDATION_FAILED',
  'ERR_JWT_EXPIRED',
  'ERR_JWT_INVALID',
  'ERR_JWS_INVALID',
  'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
  'ERR_JOSE_ALG_NOT_ALLOWED',
  'ERR_JOSE_NOT_SUPPORTED',
  'ERR_JWKS_NO_MATCHING_KEY',
  'ERR_JWKS_MULTIPLE_MATCHING_KEYS',
]);

export interface OAuthOptions {
  /** The authorization server's issuer URL, exactly as it names itself; https, or http on loopback. */
  issuer: string;
  /** This server's resource URL: every token's `aud` must name it. */
  resource: string;
  /** Scopes every token must grant (403 insufficient_scope otherwise). */
  requiredScopes?: readonly string[];
  /** For opaque (non-JWT) tokens: the introspection endpoint and our client's credentials. */
  introspection?: IntrospectionClient;
  /**
   * Introspect JWTs too, after their own checks, keeping each answer this many seconds (0:
   * ask every time): a revoked JWT is refused within that time. Needs `introspection`.
   */
  introspectJwtSeconds?: number;
  /** See DEFAULT_JWKS_COOLDOWN_MS. */
  jwksCooldownMs?: number;
  /**
   * The scopes a client is offered beyond the required ones (the per-tool scopes), asked
   * once per challenge, since the set may grow: listed as supported in the metadata, and
   * named by the 401 challenge, so that a first sign-in asks for all a client may need.
   */
  offeredScopes?: () => readonly string[];
  /**
   * Ask DPoP proofs for a nonce of this server (RFC 9449 section 8): a proof made in advance,
   * or replayed to another replica, is refused. Costs a client one more round trip per nonce.
   */
  dpopNonces?: boolean;
}

/** The OAuth authenticator, and what a server publishes about itself. */
export interface ResourceServer extends Authenticator {
  issuer: string;
  resource: string;
  /** The URL of this resource's metadata, which every 401 and 403 points to. */
  metadataUrl: string;
  /**
   * A 403 for `caller`, who lacks `scopes`: the challenge names the required scopes, those
   * offered that the caller holds already (a new token must keep them), and `scopes`.
   */
  insufficientScope(caller: Caller, scopes: readonly string[], reason: string): Denial;
  /** The Protected Resource Metadata document (RFC 9728). */
  metadata(): Record<string, unknown>;
}

/**
 * Check the URLs, discover the issuer, fetch its keys and try the introspection client: the
 * set-up fails now (an OAuthSetupError, or a RangeError for a URL), not at the first request.
 */
export async function createResourceServer(options: OAuthOptions): Promise<ResourceServer> {
  authServerUrl(options.issuer);
  const issuer = options.issuer;
  const resource = resourceUrl(options.resource);
  let { introspection } = options;
  if (introspection) authServerUrl(introspection.url);
  if (options.introspectJwtSeconds !== undefined && !introspection) throw new OAuthSetupError('introspecting JWTs needs an introspection endpoint (--auth-introspection)');
  const required = [...new Set(options.requiredScopes ?? [])];
  const offered = options.offeredScopes ?? (() => []);
  const server = await discoverIssuer(issuer, FETCH_TIMEOUT_MS);
  if (server.jwks_uri === undefined && !introspection) {
    throw new OAuthSetupError(`${issuer} publishes no jwks_uri, so its tokens cannot be checked here; give --auth-introspection URL for opaque tokens`);
  }
  if (introspection) introspection = await checkIntrospectionClient(introspection);
  // Loaded only here: a server without OAuth never evaluates jose.
  const jose = await import('jose');
  let keys: ReturnType<typeof jose.createRemoteJWKSet> | undefined;
  const jwksCooldownMs = options.jwksCooldownMs ?? DEFAULT_JWKS_COOLDOWN_MS;
  if (server.jwks_uri !== undefined) {
    keys = jose.createRemoteJWKSet(new URL(server.jwks_uri), {
      cooldownDuration: jwksCooldownMs,
      cacheMaxAge: JWKS_MAX_AGE_MS,
      timeoutDuration: FETCH_TIMEOUT_MS,
    });
    try {
      await keys.reload();
    } catch (error) {
      throw new OAuthSetupError(`cannot fetch the keys of ${issuer} from ${server.jwks_uri}: ${(error as Error).message}`);
    }
  }
  const jwtAnswers = options.introspectJwtSeconds === undefined ? undefined : new IntrospectionCache(options.introspectJwtSeconds * 1000);

  const metadataUrl = resourceMetadataUrl(resource);
  const params = (fields: Record<string, string | undefined>) =>
    Object.entries(fields)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => `${key}="${quotable(value!)}"`)
      .join(', ');
  /** The DPoP challenge: which proof algorithms are accepted (RFC 9449 section 7.1). */
  const dpopAlgs = params({ algs: DPOP_ALGORITHMS.join(' ') });
  /**
   * A challenge of the scheme the token came with. A Bearer one also offers DPoP, so that a
   * client that can bind its tokens knows it may (a second challenge, after the first).
   */
  const challenge = (fields: Record<string, string | undefined>, scheme: Caller['scheme'] = 'Bearer') =>
    scheme === 'DPoP' ? `DPoP ${dpopAlgs}, ${params({ resource_metadata: metadataUrl, ...fields })}` : `Bearer ${params({ resource_metadata: metadataUrl, ...fields })}, DPoP ${dpopAlgs}`;
  /** What a 401 asks a client to sign in for: the required scopes and those offered. */
  const signInScope = () => scopeList(required, offered());
  const invalidAs = (reason: string, scheme?: Caller['scheme']): { denial: Denial } => ({
    denial: { status: 401, kind: 'invalid_token', reason: `invalid token: ${reason}`, challenge: challenge({ error: 'invalid_token', error_description: reason, scope: signInScope() }, scheme) },
  });
  const unavailable = (kind: 'introspection_unavailable' | 'keys_unavailable', detail: string): { denial: Denial } => ({ denial: { status: 503, kind, reason: UNAVAILABLE_REASON, detail } });
  const insufficientScope = (caller: Caller, scopes: readonly string[], reason: string): Denial => {
    const held = new Set(caller.scopes ?? []);
    const kept = offered().filter((scope) => held.has(scope));
    return { status: 403, kind: 'insufficient_scope', reason, challenge: challenge({ error: 'insufficient_scope', scope: scopeList([...required, ...scopes], kept) }, caller.scheme) };
  };

  /** A bound token without the proof of its key: a DPoP one sent as a bearer token, or one bound to a TLS certificate. */
  const sendersConstrained = (reason: string): { denial: Denial } => ({
    denial: { status: 401, kind: 'sender_constrained', reason: `invalid token: ${reason}`, challenge: challenge({ error: 'invalid_token', error_description: reason, scope: signInScope() }) },
  });
  const proofs = new ProofChecker(jose, options.dpopNonces ? new NonceSource() : undefined);
  /** The header a DPoP client reads its next nonce from, with every answer to a DPoP request. */
  const nonceHeader = (): Record<string, string> | undefined => (proofs.nonces ? { 'dpop-nonce': proofs.nonces.value() } : undefined);
  /** The public URLs a proof's `htu` may name: the resource itself, and the request's path at its origin. */
  const publicUrls = (request: IncomingMessage) => {
    // Concatenated, not resolved: a path `//other.host/mcp` stays a path of this origin.
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    return [resource, `${new URL(resource).origin}${path.startsWith('/') ? path : `/${path}`}`];
  };
  /** Stamp a denial of a DPoP request with the nonce to use next. */
  const withNonce = (authentication: Authentication): Authentication =>
    authentication.denial && proofs.nonces ? { ...authentication, denial: { ...authentication.denial, headers: { ...authentication.denial.headers, ...nonceHeader() } } } : authentication;

  /** The introspection answer for `token`, from the cache when it holds one. */
  async function introspected(token: string, cache?: IntrospectionCache): Promise<Record<string, unknown>> {
    const kept = cache?.get(token);
    if (kept) return kept;
    const answer = await introspect(token, introspection!, FETCH_TIMEOUT_MS);
    cache?.set(token, answer, typeof answer.exp === 'number' ? answer.exp * 1000 : undefined);
    return answer;
  }

  /** The claims of a valid token, or why it is refused. */
  async function claimsOf(token: string, scheme: Caller['scheme']): Promise<{ claims: Record<string, unknown> } | { denial: Denial }> {
    const invalid = (reason: string) => invalidAs(reason, scheme);
    if (looksLikeJwt(token) && keys) {
      let payload: Record<string, unknown>;
      // Whether an unknown key id would be looked for now, or only after the cool-down.
      const coolingDown = keys.coolingDown;
      try {
        ({ payload } = await jose.jwtVerify(token, keys, {
          issuer,
          audience: resource,
          algorithms: ACCEPTED_ALGORITHMS,
          clockTolerance: CLOCK_LEEWAY_SECONDS,
          requiredClaims: ['exp'],
        }));
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (code === 'ERR_JWKS_NO_MATCHING_KEY' && coolingDown && isNewKey(token, keys.jwks())) {
          // Signed by a key not published when the keys were last fetched: a rotation, most
          // likely. The token may be good: the client is asked to wait, not to sign in again.
          const retryAfter = Math.max(1, Math.ceil(jwksCooldownMs / 1000));
          return {
            denial: {
              status: 503,
              kind: 'keys_rotating',
              reason: 'the access token is signed by a key not known yet (the authorization server is rotating its keys?); try again later',
              detail: `a key id not in the keys of ${issuer}: they are fetched again within ${retryAfter} s`,
              headers: { 'retry-after': String(retryAfter) },
            },
          };
        }
        if (typeof code === 'string' && TOKEN_FAULTS.has(code)) return invalid((error as Error).message);
        return unavailable('keys_unavailable', `the keys of ${issuer} cannot be fetched: ${(error as Error).message}`);
      }
      if (!jwtAnswers) return { claims: payload };
      let answer: Record<string, unknown>;
      try {
        answer = await introspected(token, jwtAnswers);
      } catch (error) {
        if (error instanceof IntrospectionError) return unavailable('introspection_unavailable', error.message);
        throw error;
      }
      // The signature vouches for the claims; the answer only says whether it still stands.
      return answer.active === true ? { claims: payload } : invalid('the authorization server says it is not active (revoked?)');
    }
    if (!introspection) return invalid('not a JWT, and opaque tokens are not accepted here (no introspection endpoint configured)');
    let answer: Record<string, unknown>;
    try {
      answer = await introspected(token);
    } catch (error) {
      if (error instanceof IntrospectionError) return unavailable('introspection_unavailable', error.message);
      throw error;
    }
    const problem = checkIntrospected(answer, issuer, resource);
    return problem === undefined ? { claims: answer } : invalid(problem);
  }

  return {
    issuer,
    resource,
    metadataUrl,
    insufficientScope,
    async authenticate(request: IncomingMessage): Promise<Authentication> {
      const authorization = request.headers.authorization ?? '';
      if (/^DPoP\s/i.test(authorization)) return withNonce(await authenticateDpop(request, authorization));
      const token = bearerToken(request);
      if (token === undefined) {
        return { denial: { status: 401, kind: 'missing_token', reason: 'an access token is required (Bearer, or DPoP with a proof)', challenge: challenge({ scope: signInScope() }) } };
      }
      const checked = await claimsOf(token, 'Bearer');
      if ('denial' in checked) return checked;
      const { claims } = checked;
      // A token bound to a key proves nothing without the proof of that key (RFC 9449 section 7.2, RFC 8705).
      if (claims.cnf !== undefined) {
        return sendersConstrained(
          jktOf(claims) === undefined
            ? 'a token bound to a TLS client certificate (cnf) is not accepted here; ask for a bearer or DPoP token'
            : 'a DPoP-bound token (cnf.jkt) must be sent with the DPoP scheme and a proof of its key, not as a bearer token',
        );
      }
      return authorized(claims, 'Bearer');
    },
    metadata: () => ({
      resource,
      authorization_servers: [issuer],
      scopes_supported: [...new Set([...required, ...offered()])],
      bearer_methods_supported: ['header'],
      dpop_signing_alg_values_supported: DPOP_ALGORITHMS,
      resource_name: 'twylt-mcp',
    }),
  };

  /** `Authorization: DPoP TOKEN`: a token bound to a key, and the proof of that key for this request. */
  async function authenticateDpop(request: IncomingMessage, authorization: string): Promise<Authentication> {
    const token = /^DPoP +([\w.~+/-]+=*) *$/i.exec(authorization)?.[1];
    if (token === undefined) return invalidAs('the Authorization header must be "DPoP" and one token', 'DPoP');
    const checked = await claimsOf(token, 'DPoP');
    if ('denial' in checked) return checked;
    const { claims } = checked;
    const jkt = jktOf(claims);
    if (jkt === undefined) return invalidAs('the token is not bound to a DPoP key (no cnf.jkt); send it as a bearer token', 'DPoP');
    const fault = await proofs.check(request.headers.dpop, { method: request.method ?? 'GET', urls: publicUrls(request), accessToken: token, jkt });
    if (fault) {
      const description = fault.error === 'use_dpop_nonce' ? fault.reason : fault.reason.replace(/^invalid DPoP proof: /, '');
      return { denial: { status: 401, kind: fault.error, reason: fault.reason, challenge: challenge({ error: fault.error, error_description: description }, 'DPoP') } };
    }
    return authorized(claims, 'DPoP');
  }

  /** The caller of valid claims, refused (403) when the required scopes are not all granted. */
  function authorized(claims: Record<string, unknown>, scheme: Caller['scheme']): Authentication {
      const caller: Caller = {
        sub: typeof claims.sub === 'string' ? claims.sub : undefined,
        clientId: [claims.client_id, claims.azp].find((value): value is string => typeof value === 'string'),
        scopes: scopesOf(claims),
        scheme,
      };
      const missing = required.filter((scope) => !caller.scopes!.includes(scope));
      if (missing.length > 0) return { denial: insufficientScope(caller, [], `the token lacks the scope ${missing.join(' ')}`), caller };
      return { caller };
  }
}

/** The thumbprint a token is bound to (`cnf.jkt`, RFC 9449 section 6), from its claims or its introspection answer. */
function jktOf(claims: Record<string, unknown>): string | undefined {
  const cnf = claims.cnf as { jkt?: unknown } | undefined;
  return typeof cnf === 'object' && cnf !== null && typeof cnf.jkt === 'string' ? cnf.jkt : undefined;
}

/** Whether `token` names a key id that `published` (the keys last fetched) does not hold. */
function isNewKey(token: string, published: { keys: { kid?: string }[] } | undefined): boolean {
  let kid: unknown;
  try {
    kid = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid;
  } catch {
    return false;
  }
  return typeof kid === 'string' && !(published?.keys ?? []).some((key) => key.kid === kid);
}

/**
 * Ask about a made-up token once: an endpoint that refuses our client (a wrong secret, a
 * client not allowed to introspect) or cannot be reached stops the start, rather than
 * refuse every caller later. Any other answer is left to the first real token. Refused
 * (401) with the credentials form-encoded, they are tried once as they are (some servers,
 * Glewlwyd, do not decode them), and kept so when that is accepted: the client returned.
 */
async function checkIntrospectionClient(client: IntrospectionClient): Promise<IntrospectionClient> {
  const tryClient = async (candidate: IntrospectionClient): Promise<IntrospectionError | undefined> => {
    try {
      await introspect(`twylt-start-up-check-${randomBytes(16).toString('hex')}`, candidate, FETCH_TIMEOUT_MS);
      return undefined;
    } catch (error) {
      if (error instanceof IntrospectionError) return error;
      throw error;
    }
  };
  const error = await tryClient(client);
  let triedRaw = false;
  if (error?.status === 401 && client.credentials === undefined) {
    const raw: IntrospectionClient = { ...client, credentials: 'raw' };
    // Only when the raw form differs: otherwise the same request would be sent twice.
    if (basicCredentials(raw) !== basicCredentials(client)) {
      triedRaw = true;
      const second = await tryClient(raw);
      if (second === undefined || (second.status !== 401 && second.status !== 403)) return raw;
    }
  }
  if (error?.status === 401 || error?.status === 403) {
    throw new OAuthSetupError(
      `the introspection endpoint ${client.url} refused the client ${JSON.stringify(client.clientId)} (HTTP ${error.status}${triedRaw ? ', with the credentials form-encoded and as they are' : ''}): ` +
        'check the client_id and client_secret of --auth-client-file, and that this client may introspect tokens',
    );
  }
  if (error !== undefined && error.status === undefined) throw new OAuthSetupError(`cannot use the introspection endpoint: ${error.message}`);
  return client;
}

/** An introspection answer held to what jwtVerify checks of a JWT: undefined when it passes, else why not. */
function checkIntrospected(answer: Record<string, unknown>, issuer: string, resource: string): string | undefined {
  if (answer.active !== true) return 'the authorization server says it is not active';
  if (answer.iss !== undefined && answer.iss !== issuer) return 'unexpected "iss" in the introspection answer';
  const audiences = typeof answer.aud === 'string' ? [answer.aud] : Array.isArray(answer.aud) ? answer.aud : [];
  if (!audiences.includes(resource)) return `its audience is not ${resource}`;
  const now = Date.now() / 1000;
  if (typeof answer.exp === 'number' && answer.exp < now - CLOCK_LEEWAY_SECONDS) return 'it has expired';
  if (typeof answer.nbf === 'number' && answer.nbf > now + CLOCK_LEEWAY_SECONDS) return 'it is not valid yet';
  return undefined;
}

/**
 * `needed` and then `more`, once each, space-separated, within MAX_CHALLENGE_SCOPE_CHARS:
 * the needed ones always, of the others as many as fit. Undefined when there are none.
 */
function scopeList(needed: readonly string[], more: readonly string[]): string | undefined {
  const words = [...new Set(needed)];
  let length = words.join(' ').length;
  for (const scope of more) {
    if (words.includes(scope)) continue;
    if (length + 1 + scope.length > MAX_CHALLENGE_SCOPE_CHARS) break;
    words.push(scope);
    length += 1 + scope.length;
  }
  return words.length > 0 ? words.join(' ') : undefined;
}

/** Three base64url parts: a JWS compact serialization (an encrypted JWT has five). */
function looksLikeJwt(token: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]*$/.test(token);
}

/**
 * A value for a quoted-string of WWW-Authenticate: printable ASCII only (a header holds
 * Latin-1 at most, and clients differ beyond ASCII), no quote, no backslash.
 */
function quotable(value: string): string {
  return value.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '?');
}
