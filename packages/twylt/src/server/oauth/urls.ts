/** The URLs of OAuth: which an authorization server may have, and where its metadata lives. */
import { isLoopback } from '../access.js';

/**
 * `text` as the URL of an authorization server (its issuer, its introspection endpoint):
 * https, or http on a loopback address (a local test or development server). A RangeError
 * says why not.
 */
export function authServerUrl(text: string): URL {
  const url = absoluteUrl(text);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname))) {
    throw new RangeError(`${JSON.stringify(text)} must be an https URL (http only on a loopback address): tokens and keys must not travel in clear text`);
  }
  if (url.hash || url.search) throw new RangeError(`${JSON.stringify(text)} must not have a query or a fragment`);
  return url;
}

/** `text` as a resource URL (RFC 8707): absolute, no fragment. */
export function resourceUrl(text: string): string {
  if (absoluteUrl(text).hash) throw new RangeError(`${JSON.stringify(text)} must not have a fragment`);
  return text;
}

function absoluteUrl(text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new RangeError(`${JSON.stringify(text)} is not a URL`);
  }
}

/** The well-known path of Protected Resource Metadata (RFC 9728). */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/**
 * Where the Protected Resource Metadata of `resource` is (RFC 9728 section 3.1): the
 * well-known path inserted between the host and the resource's path.
 */
export function resourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}${RESOURCE_METADATA_PATH}${path}`;
}

/** The paths a server answers its resource metadata at: the bare well-known path and the form for `resource`. */
export function resourceMetadataPaths(resource: string): string[] {
  return [...new Set([RESOURCE_METADATA_PATH, new URL(resourceMetadataUrl(resource)).pathname])];
}

/**
 * Where an issuer's metadata may be, in the order tried: OAuth's (RFC 8414, the well-known
 * path inserted before the issuer's path), then OpenID Connect's, inserted and appended
 * (Keycloak's realms, `https://sso.example.com/realms/acme`, use the appended form).
 */
export function issuerMetadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return [
    ...new Set([
      `${url.origin}/.well-known/oauth-authorization-server${path}`,
      `${url.origin}/.well-known/openid-configuration${path}`,
      `${url.origin}${path}/.well-known/openid-configuration`,
    ]),
  ];
}
