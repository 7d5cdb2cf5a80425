/**
 * DPoP proofs (RFC 9449 section 4.3) for a resource server: a request that presents a
 * DPoP-bound access token (`Authorization: DPoP TOKEN`) carries, in its `DPoP` header, a JWT
 * signed by the key the token is bound to, naming this request. Checked here, with jose:
 * the JWS (`typ` dpop+jwt, an asymmetric algorithm, the public key in its `jwk` header, the
 * signature), the request (`htm`, `htu`), its age (`iat`), the token (`ath`), the key
 * (`cnf.jkt` of the token is the proof key's thumbprint, RFC 7638), that it is new (`jti`,
 * in memory: see ProofLog), and, when asked, a nonce of this server (`DPoP-Nonce`).
 */
import { createHash, randomBytes } from 'node:crypto';

/** The proof algorithms accepted, as published in `dpop_signing_alg_values_supported`: asymmetric only (RFC 9449 section 11.6). */
export const DPOP_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA', 'Ed25519'];
/** How old a proof may be: its `iat` at most this many seconds ago (plus the skew). */
export const DPOP_PROOF_MAX_AGE_SECONDS = 60;
/** How far a client's clock may be ahead of ours, or behind beyond the age, in seconds. */
export const DPOP_CLOCK_SKEW_SECONDS = 5;
/** Proofs remembered at most (replay protection): memory stays bounded whatever callers send. */
export const MAX_REMEMBERED_PROOFS = 100_000;
/** How long a server nonce is given out; the one before it is still accepted. */
export const DPOP_NONCE_LIFETIME_MS = 5 * 60_000;
/** The longest proof read: a proof holds one public key (an RSA-4096 one fits), not a payload. */
const MAX_PROOF_CHARS = 8192;

/** Why a proof is refused: `use_dpop_nonce` asks the client to sign again with the nonce given. */
export interface ProofFault {
  error: 'invalid_dpop_proof' | 'use_dpop_nonce';
  reason: string;
}

export interface ProofRequest {
  /** The request's method (`htm`). */
  method: string;
  /** The URLs the request may name in `htu`: this server's public URLs for it. */
  urls: readonly string[];
  /** The access token presented with the proof (`ath`). */
  accessToken: string;
  /** The token's `cnf.jkt`: the thumbprint of the key it is bound to. */
  jkt: string;
}

type Jose = typeof import('jose');

/**
 * The `jti` of each proof accepted, for as long as the proof could be accepted again (its
 * `iat` window), per key. In this process only: behind a load balancer, a proof replayed to
 * another replica within the window is accepted there, unless server nonces are on (each
 * replica's nonces are its own). When full, the oldest entry goes, which is the one closest
 * to leaving the window anyway.
 */
export class ProofLog {
  private readonly seen = new Map<string, number>();
  constructor(private readonly capacity = MAX_REMEMBERED_PROOFS) {}

  /** Whether `jti` of `jkt` is new; remembered until `until` (ms since the epoch) if it is. */
  remember(jkt: string, jti: string, until: number, now = Date.now()): boolean {
    const key = createHash('sha256').update(`${jkt}\0${jti}`).digest('base64url');
    const kept = this.seen.get(key);
    if (kept !== undefined && kept > now) return false;
    if (this.seen.size >= this.capacity) {
      for (const [entry, expiry] of this.seen) if (expiry <= now) this.seen.delete(entry);
      if (this.seen.size >= this.capacity) this.seen.delete(this.seen.keys().next().value!);
    }
    this.seen.delete(key);
    this.seen.set(key, until);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }
}

/** The nonces of this server: the current one, and the one before (a client may hold it still). */
export class NonceSource {
  private current = randomBytes(16).toString('base64url');
  private previous: string | undefined;
  private since: number;
  constructor(private readonly lifetimeMs = DPOP_NONCE_LIFETIME_MS, now = Date.now()) {
    this.since = now;
  }

  /** The nonce a client should use now. */
  value(now = Date.now()): string {
    if (now - this.since >= this.lifetimeMs) {
      this.previous = this.current;
      this.current = randomBytes(16).toString('base64url');
      this.since = now;
    }
    return this.current;
  }

  accepts(nonce: unknown, now = Date.now()): boolean {
    const current = this.value(now);
    return typeof nonce === 'string' && (nonce === current || nonce === this.previous);
  }
}

/**
 * A URL as `htu` compares it (RFC 9449 section 4.3, RFC 3986 section 6.2): scheme and host
 * in lower case, the default port dropped, the path as WHATWG URL normalises it; no query,
 * no fragment. Undefined when `text` is not an absolute http(s) URL.
 */
export function htuOf(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** `base64url(sha256(token))`: the `ath` of a proof for `token`. */
export function accessTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** Checks proofs against requests, remembering each proof accepted. */
export class ProofChecker {
  readonly log = new ProofLog();
  constructor(
    private readonly jose: Jose,
    /** When set, every proof must carry one of its nonces. */
    readonly nonces?: NonceSource,
  ) {}

  /** Undefined when `header` (the request's `DPoP` header) proves `request`, else why not. */
  async check(header: string | string[] | undefined, request: ProofRequest, now = Date.now()): Promise<ProofFault | undefined> {
    const invalid = (reason: string): ProofFault => ({ error: 'invalid_dpop_proof', reason: `invalid DPoP proof: ${reason}` });
    if (header === undefined) return invalid('a DPoP-bound token needs a DPoP header with a proof');
    // Node joins repeated headers with ", ": a JWT holds no comma.
    if (Array.isArray(header) || header.includes(',')) return invalid('one DPoP header, with one proof');
    if (header.length > MAX_PROOF_CHARS) return invalid(`longer than ${MAX_PROOF_CHARS} characters`);
    const { jose } = this;
    let payload: Record<string, unknown>;
    let jwk: Record<string, unknown>;
    try {
      const verified = await jose.jwtVerify(header, jose.EmbeddedJWK, { typ: 'dpop+jwt', algorithms: DPOP_ALGORITHMS, currentDate: new Date(now) });
      payload = verified.payload as Record<string, unknown>;
      jwk = verified.protectedHeader.jwk as Record<string, unknown>;
    } catch (error) {
      return invalid((error as Error).message);
    }
    if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256) return invalid('"jti" must be a string of 1 to 256 characters');
    if (payload.htm !== request.method) return invalid(`"htm" must be ${request.method}`);
    const htu = typeof payload.htu === 'string' ? htuOf(payload.htu) : undefined;
    if (htu === undefined || !request.urls.some((url) => htuOf(url) === htu)) return invalid(`"htu" must be ${htuOf(request.urls[0]!)}`);
    const seconds = now / 1000;
    if (typeof payload.iat !== 'number') return invalid('"iat" is missing');
    if (payload.iat > seconds + DPOP_CLOCK_SKEW_SECONDS) return invalid('"iat" is in the future');
    if (payload.iat < seconds - DPOP_PROOF_MAX_AGE_SECONDS - DPOP_CLOCK_SKEW_SECONDS) return invalid(`"iat" is more than ${DPOP_PROOF_MAX_AGE_SECONDS} seconds old`);
    if (payload.ath !== accessTokenHash(request.accessToken)) return invalid('"ath" is not the hash of the access token');
    const thumbprint = await jose.calculateJwkThumbprint(jwk as Parameters<Jose['calculateJwkThumbprint']>[0], 'sha256');
    if (thumbprint !== request.jkt) return invalid('its key is not the one the access token is bound to (cnf.jkt)');
    if (this.nonces && !this.nonces.accepts(payload.nonce, now)) {
      return { error: 'use_dpop_nonce', reason: 'the DPoP proof must carry the nonce of the DPoP-Nonce header' };
    }
    // Remembered as long as it could pass the iat check again.
    const until = (payload.iat + DPOP_PROOF_MAX_AGE_SECONDS + DPOP_CLOCK_SKEW_SECONDS) * 1000 + 1000;
    if (!this.log.remember(thumbprint, payload.jti, until, now)) return invalid('this proof was used already ("jti" seen before)');
    return undefined;
  }
}
