/**
 * Opaque access tokens: asked about at the authorization server's introspection endpoint
 * (RFC 7662), as a confidential client (HTTP Basic with the client's id and secret).
 */
import { causeOf } from './discovery.js';

export interface IntrospectionClient {
  /** The introspection endpoint (https, or http on loopback). */
  url: string;
  clientId: string;
  clientSecret: string;
}

/** The answer is not usable (the endpoint is down, or refuses our client): not the token's fault. */
export class IntrospectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IntrospectionError';
  }
}

/** The introspection answer for `token`: `{active: false}` or the token's claims. */
export async function introspect(token: string, client: IntrospectionClient, timeoutMs: number): Promise<Record<string, unknown>> {
  // RFC 7662 section 2.1 with RFC 6749 section 2.3.1: id and secret form-encoded, then Basic.
  const basic = Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64');
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
    throw new IntrospectionError(`introspection at ${client.url} answered HTTP ${response.status}`);
  }
  const answer: unknown = await response.json().catch(() => undefined);
  if (typeof answer !== 'object' || answer === null || typeof (answer as { active?: unknown }).active !== 'boolean') {
    throw new IntrospectionError(`introspection at ${client.url} answered no {"active": true|false} object`);
  }
  return answer as Record<string, unknown>;
}
