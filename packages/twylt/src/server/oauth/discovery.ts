/** An authorization server's metadata, fetched once at start-up (RFC 8414, OpenID Connect Discovery). */
import { authServerUrl, issuerMetadataUrls } from './urls.js';

/** The fields a resource server reads. */
export interface IssuerMetadata {
  issuer: string;
  jwks_uri?: string;
  introspection_endpoint?: string;
}

/** The OAuth set-up cannot work: the message says what to fix. */
export class OAuthSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OAuthSetupError';
  }
}

/**
 * The metadata of `issuer`, from the first well-known URL that answers 200 with JSON. Its
 * `issuer` must be exactly ours (RFC 8414 section 3.3: else anyone serving a document
 * could name any issuer), and its `jwks_uri` an https URL.
 */
export async function discoverIssuer(issuer: string, timeoutMs: number): Promise<IssuerMetadata> {
  const tried: string[] = [];
  for (const url of issuerMetadataUrls(issuer)) {
    let response: Response;
    try {
      response = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      tried.push(`${url}: ${causeOf(error)}`);
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      tried.push(`${url}: HTTP ${response.status}`);
      continue;
    }
    let metadata: unknown;
    try {
      metadata = await response.json();
    } catch {
      tried.push(`${url}: not JSON`);
      continue;
    }
    return checkMetadata(metadata, issuer, url);
  }
  throw new OAuthSetupError(`cannot discover the authorization server ${issuer}:\n  ${tried.join('\n  ')}`);
}

function checkMetadata(metadata: unknown, issuer: string, url: string): IssuerMetadata {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw new OAuthSetupError(`${url} is not a JSON object`);
  const fields = metadata as Record<string, unknown>;
  if (fields.issuer !== issuer) {
    throw new OAuthSetupError(`${url} names the issuer ${JSON.stringify(fields.issuer)}, not ${JSON.stringify(issuer)}; give --auth-issuer exactly as the server names itself`);
  }
  for (const key of ['jwks_uri', 'introspection_endpoint'] as const) {
    const value = fields[key];
    if (value === undefined) continue;
    try {
      authServerUrl(String(value));
    } catch (error) {
      throw new OAuthSetupError(`${url}: ${key} ${(error as Error).message}`);
    }
  }
  return { issuer, jwks_uri: fields.jwks_uri as string | undefined, introspection_endpoint: fields.introspection_endpoint as string | undefined };
}

/** What a failed fetch says: undici puts the reason (ECONNREFUSED, a time-out) in `cause`. */
export function causeOf(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? cause.message : (error as Error).message;
}
