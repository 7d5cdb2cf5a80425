/**
 * An OAuth 2.1 resource server (ADR 0027): the Authenticator for access tokens that an
 * authorization server the team already runs (Keycloak, Auth0, Okta, Entra ID...) issues.
 * A JWT is checked here, with jose: signature by a key of the issuer's JWKS (asymmetric
 * algorithms only), issuer, audience (this resource, RFC 8707), expiry and not-before
 * with a small leeway, required scopes. An opaque token is asked about at the issuer's
 * introspection endpoint (RFC 7662). The token itself is never logged or kept.
 */
import type { IncomingMessage } from 'node:http';
import type { JWTVerifyGetKey } from 'jose';
import { bearerToken, type Authentication, type Authenticator, type Caller, type Denial } from '../authenticator.js';
import { discoverIssuer, OAuthSetupError } from './discovery.js';
import { introspect, IntrospectionError, type IntrospectionClient } from './introspection.js';
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
 * The signature algorithms accepted: asymmetric only. `none` signs nothing, and an HMAC
 * key would be the public key itself, which anyone can fetch (the "algorithm confusion" attack).
 */
export const ACCEPTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

export interface OAuthOptions {
  /** The authorization server's issuer URL, exactly as it names itself; https, or http on loopback. */
  issuer: string;
  /** This server's resource URL: every token's `aud` must name it. */
  resource: string;
  /** Scopes every token must grant (403 insufficient_scope otherwise). */
  requiredScopes?: readonly string[];
  /** For opaque (non-JWT) tokens: the introspection endpoint and our client's credentials. */
  introspection?: IntrospectionClient;
  /** See DEFAULT_JWKS_COOLDOWN_MS. */
  jwksCooldownMs?: number;
}

/** The OAuth authenticator, and what a server publishes about itself. */
export interface ResourceServer extends Authenticator {
  issuer: string;
  resource: string;
  /** The URL of this resource's metadata, which every 401 and 403 points to. */
  metadataUrl: string;
  /** A 403 for a caller that lacks `scopes` (the required ones are added). */
  insufficientScope(scopes: readonly string[], reason: string): Denial;
  /** The Protected Resource Metadata document (RFC 9728), listing `scopes` as supported. */
  metadata(scopes: readonly string[]): Record<string, unknown>;
}

/**
 * Check the URLs, discover the issuer and fetch its keys: the set-up fails now (an
 * OAuthSetupError, or a RangeError for a URL), not at the first request.
 */
export async function createResourceServer(options: OAuthOptions): Promise<ResourceServer> {
  authServerUrl(options.issuer);
  const issuer = options.issuer;
  const resource = resourceUrl(options.resource);
  if (options.introspection) authServerUrl(options.introspection.url);
  const required = [...new Set(options.requiredScopes ?? [])];
  const server = await discoverIssuer(issuer, FETCH_TIMEOUT_MS);
  if (server.jwks_uri === undefined && !options.introspection) {
    throw new OAuthSetupError(`${issuer} publishes no jwks_uri, so its tokens cannot be checked here; give --auth-introspection URL for opaque tokens`);
  }
  // Loaded only here: a server without OAuth never evaluates jose.
  const jose = await import('jose');
  let keys: (JWTVerifyGetKey & { reload(): Promise<void> }) | undefined;
  if (server.jwks_uri !== undefined) {
    keys = jose.createRemoteJWKSet(new URL(server.jwks_uri), {
      cooldownDuration: options.jwksCooldownMs ?? DEFAULT_JWKS_COOLDOWN_MS,
      cacheMaxAge: JWKS_MAX_AGE_MS,
      timeoutDuration: FETCH_TIMEOUT_MS,
    });
    try {
      await keys.reload();
    } catch (error) {
      throw new OAuthSetupError(`cannot fetch the keys of ${issuer} from ${server.jwks_uri}: ${(error as Error).message}`);
    }
  }

  const metadataUrl = resourceMetadataUrl(resource);
  const challenge = (fields: Record<string, string | undefined>) =>
    `Bearer ${Object.entries({ resource_metadata: metadataUrl, ...fields })
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => `${key}="${quotable(value!)}"`)
      .join(', ')}`;
  const requiredScope = required.length > 0 ? required.join(' ') : undefined;
  const invalid = (reason: string): Authentication => ({
    denial: { status: 401, reason: `invalid token: ${reason}`, challenge: challenge({ error: 'invalid_token', error_description: reason, scope: requiredScope }) },
  });
  const insufficientScope = (scopes: readonly string[], reason: string): Denial => ({
    status: 403,
    reason,
    challenge: challenge({ error: 'insufficient_scope', scope: [...new Set([...required, ...scopes])].join(' ') }),
  });

  /** The claims of a valid token, or the reason it is not. */
  async function claimsOf(token: string): Promise<Record<string, unknown> | string> {
    if (looksLikeJwt(token) && keys) {
      try {
        const { payload } = await jose.jwtVerify(token, keys, {
          issuer,
          audience: resource,
          algorithms: ACCEPTED_ALGORITHMS,
          clockTolerance: CLOCK_LEEWAY_SECONDS,
          requiredClaims: ['exp'],
        });
        return payload as Record<string, unknown>;
      } catch (error) {
        return (error as Error).message;
      }
    }
    if (!options.introspection) return 'not a JWT, and opaque tokens are not accepted here (no introspection endpoint configured)';
    let answer: Record<string, unknown>;
    try {
      answer = await introspect(token, options.introspection, FETCH_TIMEOUT_MS);
    } catch (error) {
      if (error instanceof IntrospectionError) return `cannot be checked now: ${error.message}`;
      throw error;
    }
    return checkIntrospected(answer, issuer, resource);
  }

  return {
    issuer,
    resource,
    metadataUrl,
    insufficientScope,
    async authenticate(request: IncomingMessage): Promise<Authentication> {
      const token = bearerToken(request);
      if (token === undefined) {
        return { denial: { status: 401, reason: 'a bearer access token is required', challenge: challenge({ scope: requiredScope }) } };
      }
      const claims = await claimsOf(token);
      if (typeof claims === 'string') return invalid(claims);
      const caller: Caller = {
        sub: typeof claims.sub === 'string' ? claims.sub : undefined,
        clientId: [claims.client_id, claims.azp].find((value): value is string => typeof value === 'string'),
        scopes: scopesOf(claims),
      };
      const missing = required.filter((scope) => !caller.scopes!.includes(scope));
      if (missing.length > 0) return { denial: insufficientScope([], `the token lacks the scope ${missing.join(' ')}`) };
      return { caller };
    },
    metadata: (scopes) => ({
      resource,
      authorization_servers: [issuer],
      scopes_supported: [...new Set([...required, ...scopes])],
      bearer_methods_supported: ['header'],
      resource_name: 'twylt-mcp',
    }),
  };
}

/** An introspection answer's claims, held to what jwtVerify checks of a JWT. */
function checkIntrospected(answer: Record<string, unknown>, issuer: string, resource: string): Record<string, unknown> | string {
  if (answer.active !== true) return 'the authorization server says it is not active';
  if (answer.iss !== undefined && answer.iss !== issuer) return 'unexpected "iss" in the introspection answer';
  const audiences = typeof answer.aud === 'string' ? [answer.aud] : Array.isArray(answer.aud) ? answer.aud : [];
  if (!audiences.includes(resource)) return `its audience is not ${resource}`;
  const now = Date.now() / 1000;
  if (typeof answer.exp === 'number' && answer.exp < now - CLOCK_LEEWAY_SECONDS) return 'it has expired';
  if (typeof answer.nbf === 'number' && answer.nbf > now + CLOCK_LEEWAY_SECONDS) return 'it is not valid yet';
  return answer;
}

/** Three base64url parts: a JWS compact serialization (an encrypted JWT has five). */
function looksLikeJwt(token: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]*$/.test(token);
}

/** A value for a quoted-string of WWW-Authenticate: no quote, no backslash, no control character. */
function quotable(value: string): string {
  return value.replace(/["\\]/g, "'").replace(/[\u0000-\u001f\u007f]/g, ' ');
}
