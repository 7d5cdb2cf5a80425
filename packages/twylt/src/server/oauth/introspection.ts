/**
 * Opaque access tokens, and JWTs when asked to: looked up at the authorization server's
 * introspection endpoint (RFC 7662), as a confidential client (HTTP Basic with the
 * client's id and secret).
 */
import { createHash } from 'node:crypto';
import { causeOf } from './discovery.js';

export interface IntrospectionClient {
  /** The introspection endpoint (https, or http on loopback). */
  url: string;
  clientId: string;
  clientSecret: string;
  /**
   * How id and secret go into HTTP Basic: `form`, form-encoded first as RFC 6749 section
   * 2.3.1 says (the default), or `raw`, as they are, for servers that do not decode them
   * (Glewlwyd). They differ only for characters such as `+ / = : %` and non-ASCII.
   */
  credentials?: 'form' | 'raw';
}

/** The value of the Basic credentials of `client`, as its `credentials` says. */
export function basicCredentials(client: IntrospectionClient): string {
  // Percent-encoding decodes the same as form-encoding (a space as %20 rather than +).
  const encode = client.credentials === 'raw' ? (text: string) => text : encodeURIComponent;
  return Buffer.from(`${encode(client.clientId)}:${encode(client.clientSecret)}`).toString('base64');
}

/**
 * The answer is not usable (the endpoint is down, or refuses our client): not the token's
 * fault. The message names the endpoint: for the operator's log, never for the caller.
 */
export class IntrospectionError extends Error {
  /** The endpoint's HTTP status, when it answered one. */
  readonly status: number | undefined;
  constructor(message: string, status?: number) {
    super(message);
    this.name = 'IntrospectionError';
    this.status = status;
  }
}

/** The introspection answer for `token`: `{active: false}` or the token's claims. */
export async function introspect(token: string, client: IntrospectionClient, timeoutMs: number): Promise<Record<string, unknown>> {
  // RFC 7662 section 2.1 with RFC 6749 section 2.3.1: id and secret form-encoded, then Basic.
  const basic = basicCredentials(client);
  let response: Response;
  try {
    response = await fetch(client.url, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new IntrospectionError(`introspection at ${client.url} failed: ${causeOf(error)}`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new IntrospectionError(`introspection at ${client.url} answered HTTP ${response.status}`, response.status);
  }
  const answer: unknown = await response.json().catch(() => undefined);
  if (typeof answer !== 'object' || answer === null || typeof (answer as { active?: unknown }).active !== 'boolean') {
    throw new IntrospectionError(`introspection at ${client.url} answered no {"active": true|false} object`);
  }
  return answer as Record<string, unknown>;
}

/** How many answers the cache holds at most: its memory stays bounded whatever callers send. */
export const MAX_CACHED_ANSWERS = 10_000;

/**
 * Introspection answers kept for a while (`--auth-introspect-jwt SECONDS`), by a hash of the
 * token: the token itself is never kept. An answer is kept no longer than the token lives.
 */
export class IntrospectionCache {
  private readonly answers = new Map<string, { until: number; answer: Record<string, unknown> }>();
  constructor(private readonly keepMs: number) {}

  get(token: string, now = Date.now()): Record<string, unknown> | undefined {
    const key = keyOf(token);
    const kept = this.answers.get(key);
    if (kept === undefined) return undefined;
    if (kept.until > now) return kept.answer;
    this.answers.delete(key);
    return undefined;
  }

  set(token: string, answer: Record<string, unknown>, expiresAt: number | undefined, now = Date.now()): void {
    const until = Math.min(now + this.keepMs, expiresAt ?? Number.POSITIVE_INFINITY);
    if (until <= now) return;
    if (this.answers.size >= MAX_CACHED_ANSWERS) {
      for (const [key, kept] of this.answers) if (kept.until <= now) this.answers.delete(key);
      // Still full: the oldest goes (a Map iterates in insertion order).
      if (this.answers.size >= MAX_CACHED_ANSWERS) this.answers.delete(this.answers.keys().next().value!);
    }
    this.answers.set(keyOf(token), { until, answer });
  }

  get size(): number {
    return this.answers.size;
  }
}

function keyOf(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
