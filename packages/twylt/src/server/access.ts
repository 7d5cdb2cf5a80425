/**
 * Who may talk to a local or remote consumer server (`twylt inspect`, `twylt-mcp --http`):
 * the checks every such server makes on every request, before anything else runs.
 *
 * - Host: only names the server knows itself by, so that a web page cannot reach it through
 *   a DNS name that an attacker re-points at 127.0.0.1 (DNS rebinding).
 * - Origin: a browser request must come from the server's own pages or an allowed origin;
 *   a request without Origin is not from a browser page and passes this check.
 * - Token: a secret per server, from `Authorization: Bearer`, or where the policy allows it
 *   from a cookie or a query parameter (the link a local server prints, as Jupyter does).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

export interface AccessPolicy {
  /** Accepted `Host` header values, lower case, `host:port` (see hostsFor), or 'any'. */
  hosts: readonly string[] | 'any';
  /** Accepted `Origin` header values (`http://host:port`), besides none at all. */
  origins: readonly string[];
  /** The secret every request must carry; undefined: none is needed. */
  token?: string;
  /** A cookie that may carry the token instead of the Authorization header. */
  tokenCookie?: string;
  /** A query parameter that may carry the token (a link to open in a browser). */
  tokenQuery?: string;
}

/** Why a request is refused: 403 for a foreign Host or Origin, 401 for a missing or wrong token. */
export interface Refusal {
  status: 401 | 403;
  reason: string;
}

/** A new secret: 32 random bytes, URL-safe. */
export function createToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Compare in constant time: the time taken says nothing about how much of a guess was right. */
export function tokenMatches(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(token));
}

/** The first failing check of `request`, or undefined when it may go on. */
export function checkAccess(request: IncomingMessage, policy: AccessPolicy): Refusal | undefined {
  const host = request.headers.host?.toLowerCase();
  if (policy.hosts !== 'any' && (host === undefined || !policy.hosts.includes(host))) {
    return { status: 403, reason: `Host ${JSON.stringify(host ?? '')} is not one of this server's names` };
  }
  const origin = request.headers.origin;
  if (origin !== undefined && !policy.origins.includes(origin.toLowerCase())) {
    return { status: 403, reason: `Origin ${JSON.stringify(origin)} is not allowed` };
  }
  if (policy.token !== undefined && !tokenMatches(tokenOf(request, policy), policy.token)) {
    return { status: 401, reason: 'a valid token is required' };
  }
  return undefined;
}

/** The token a request carries, wherever the policy allows it to be. */
export function tokenOf(request: IncomingMessage, policy: Pick<AccessPolicy, 'tokenCookie' | 'tokenQuery'>): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
  if (bearer !== undefined) return bearer;
  if (policy.tokenCookie) {
    const cookie = cookieValue(request.headers.cookie, policy.tokenCookie);
    if (cookie !== undefined) return cookie;
  }
  if (policy.tokenQuery) return new URL(request.url ?? '/', 'http://x').searchParams.get(policy.tokenQuery) ?? undefined;
  return undefined;
}

/**
 * The value of the cookie `name`, decoded. Only that one is decoded: the other cookies of the
 * host (other applications on other ports share them) are none of this server's business, and
 * a malformed value of ours counts as no cookie.
 */
function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at <= 0 || part.slice(0, at).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** Whether `host` (a name or an address, IPv6 with or without brackets) is this machine only. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1' || bare === '0:0:0:0:0:0:0:1';
}

/** `host:port` as it appears in a Host header or a URL, IPv6 in brackets. */
export function hostPort(host: string, port: number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`.toLowerCase();
}

/**
 * The Host values of a server bound to `host`: the name it was given, plus, for a loopback
 * server, the usual loopback names. A server bound to every interface (0.0.0.0, ::) names
 * itself through `extra` (its public names), or accepts any Host when it needs a token.
 */
export function hostsFor(host: string, port: number, extra: readonly string[] = []): string[] {
  const withPort = (name: string) => (hasPort(name) ? name.toLowerCase() : hostPort(name, port));
  const names = new Set([hostPort(host, port), ...extra.map(withPort)]);
  if (isLoopback(host)) for (const name of ['127.0.0.1', 'localhost', '::1']) names.add(hostPort(name, port));
  return [...names];
}

/** `name:8080` and `[::1]:8080` have a port; `::1` and `name` do not. */
function hasPort(name: string): boolean {
  return /:\d+$/.test(name) && (name.startsWith('[') || isIP(name) !== 6);
}

/**
 * An origin as a browser sends it: `scheme://host[:port]`, lower case, nothing after; what
 * an allowed origin of an AccessPolicy is written as. Throws a RangeError for anything else
 * (a path, `null`, a bare name).
 */
export function normalizeOrigin(text: string): string {
  const normalized = text.trim().toLowerCase().replace(/\/+$/, '');
  let url: URL | undefined;
  try {
    url = new URL(normalized);
  } catch {
    // reported below
  }
  if (!url || url.origin === 'null' || url.origin !== normalized) {
    throw new RangeError(`an origin is scheme, host and port only, such as https://app.example.com; got ${JSON.stringify(text)}`);
  }
  return normalized;
}

/** The origins of a server's own pages at `host:port`, for the loopback names too. */
export function originsFor(hosts: readonly string[]): string[] {
  return hosts.map((host) => `http://${host}`);
}
