/**
 * twylt/server: what every consumer server shares (`twylt inspect`, `twylt-mcp --http`):
 * access checks (Host, Origin), authenticators (a shared token, OAuth access tokens),
 * bounded request bodies, and safe binding. node:http only (jose once OAuth is set up);
 * a tool's own start-up never loads it.
 */
export { checkAccess, createToken, hostPort, hostsFor, isLoopback, normalizeOrigin, originsFor, tokenMatches, tokenOf } from './access.js';
export type { AccessPolicy, Refusal } from './access.js';
export { anyone, bearerToken, tokenAuthenticator } from './authenticator.js';
export type { Authentication, Authenticator, Caller, Denial, DenialKind } from './authenticator.js';
export * from './oauth/index.js';
export { BodyTooLargeError, MAX_JSON_DEPTH, parseBoundedJson, readBody } from './body.js';
export { DEFAULT_HOST, assertSafeBind, listen, parseListenAddress } from './listen.js';
