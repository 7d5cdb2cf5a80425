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
}

/** A request refused for its credential: 401 (none, or not valid) or 403 (valid, not enough). */
export interface Denial {
  status: 401 | 403;
  /** For the log and the JSON-RPC error; never quotes the credential. */
  reason: string;
  /** The `WWW-Authenticate` header of the answer. */
  challenge: string;
}

export type Authentication = { caller: Caller; denial?: undefined } | { denial: Denial; caller?: undefined };

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
  const denial: Denial = { status: 401, reason: 'a valid token is required', challenge: 'Bearer realm="twylt-mcp"' };
  return {
    authenticate: async (request) => (tokenMatches(bearerToken(request), token) ? { caller: {} } : { denial }),
  };
}

/** No credential asked for (a server on loopback without a token): everyone is an unnamed caller. */
export const anyone: Authenticator = { authenticate: async () => ({ caller: {} }) };
