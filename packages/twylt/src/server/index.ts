/**
 * twylt/server: what every consumer server shares (`twylt inspect`, `twylt-mcp --http`):
 * access checks (Host, Origin, token), bounded request bodies, and safe binding.
 * node:http only; a tool's own start-up never loads it.
 */
export { checkAccess, createToken, hostPort, hostsFor, isLoopback, originsFor, tokenMatches, tokenOf } from './access.js';
export type { AccessPolicy, Refusal } from './access.js';
export { BodyTooLargeError, MAX_JSON_DEPTH, parseBoundedJson, readBody } from './body.js';
export { DEFAULT_HOST, assertSafeBind, listen, parseListenAddress } from './listen.js';
