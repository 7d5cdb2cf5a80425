/**
 * OAuth 2.1 for a server: a resource server that checks the access tokens of an existing
 * authorization server, its Protected Resource Metadata, and per-tool scopes. jose is
 * loaded by createResourceServer only.
 */
export { ACCEPTED_ALGORITHMS, CLOCK_LEEWAY_SECONDS, DEFAULT_JWKS_COOLDOWN_MS, createResourceServer } from './resource-server.js';
export type { OAuthOptions, ResourceServer } from './resource-server.js';
export { OAuthSetupError } from './discovery.js';
export { DPOP_ALGORITHMS, DPOP_CLOCK_SKEW_SECONDS, DPOP_PROOF_MAX_AGE_SECONDS, MAX_REMEMBERED_PROOFS, ProofChecker, ProofLog, NonceSource, accessTokenHash, htuOf } from './dpop.js';
export type { IntrospectionClient } from './introspection.js';
export { ALL_TOOLS_SCOPE, mayCallTool, scopesOf, toolScope } from './scopes.js';
export { RESOURCE_METADATA_PATH, authServerUrl, issuerMetadataUrls, resourceMetadataPaths, resourceMetadataUrl, resourceUrl } from './urls.js';
