/**
 * Who is calling: the credential check of a server, behind one interface, so that a server
 * asks the same question whichever kind of credential it takes. Two implementations: one
 * shared secret (`tokenAuthenticator`, below) and OAuth 2.1 access tokens (`oauth/`).
 * Host and Origin are checked before (access.ts); an authenticator looks at the credential only.
 */
import type { IncomingMessage } from 'node:http';
import { tokenMatches, tokenOf } from './access.js';

/** Who a request's credential names. A shared secret names nobody: every field is absent. */
export interface Caller {
  /** The token's subject (`sub`): a user, or a client acting for itself. */
  sub?: string;
  /** The client the token was issued to (`client_id`, or `azp`). */
  clientId?: string;
  /** The scopes the token grants; undefined: a credential without scopes, which grants everything. */
  scopes?: readonly string[];
  /** How an OAuth access token was presented: `DPoP` for a token bound to a key and proven (RFC 9449). */
  scheme?: 'Bearer' | 'DPoP';
}

/**
 * Why a request was refused, in one short stable word, for counting (metrics, alerts).
 * The `_unavailable` kinds are the server's fault, not the caller's: the token may be good.
 */
export type DenialKind =
  | 'missing_token'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'sender_constrained'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | 'introspection_unavailable'
  | 'keys_unavailable'
  | 'keys_rotating';

/**
 * A request refused for its credential: 401 (none, or not valid), 403 (valid, not enough),
 * or 503 (it cannot be checked now: the authorization server is down or refuses us).
 */
export interface Denial {
  status: 401 | 403 | 503;
  kind: DenialKind;
  /** For the log and the JSON-RPC error; never quotes the credential, never names an internal address. */
  reason: string;
  /** For the operator's log only: what the caller is not told (an internal URL, the fault). */
  detail?: string;
  /** The `WWW-Authenticate` header of the answer (none with a 503: the credential is not at fault). */
  challenge?: string;
  /** More headers of the answer: `DPoP-Nonce`, or a `Retry-After` of the server's own for a 503. */
  headers?: Record<string, string>;
}

/** A denial may name the caller: a valid token that grants too little (403) still says whose it is. */
export type Authentication = { caller: Caller; denial?: undefined } | { denial: Denial; caller?: Caller };

export interface Authenticator {
  /** The caller a request's credential proves, or why it is refused. */
  authenticate(request: IncomingMessage): Promise<Authentication>;
}

/** The token of `Authorization: Bearer TOKEN`, and nowhere else. */
export function bearerToken(request: IncomingMessage): string | undefined {
  return tokenOf(request, {});
}

/** One shared secret, in the `Authorization` header (TWYLT_MCP_TOKEN). */
export function tokenAuthenticator(token: string): Authenticator {
  const challenge = 'Bearer realm="twylt-mcp"';
  const missing: Denial = { status: 401, kind: 'missing_token', reason: 'a valid token is required', challenge };
  const invalid: Denial = { ...missing, kind: 'invalid_token' };
  return {
    authenticate: async (request) => {
      const given = bearerToken(request);
      if (tokenMatches(given, token)) return { caller: {} };
      return { denial: given === undefined ? missing : invalid };
    },
  };
}

/** No credential asked for (a server on loopback without a token): everyone is an unnamed caller. */
export const anyone: Authenticator = { authenticate: async () => ({ caller: {} }) };
