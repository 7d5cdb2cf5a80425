/**
 * The bounds of a JWT access token's check, held exactly (issue 30, item 12): the clock
 * leeway is 30 seconds (a token expired 10 s ago passes, one expired 60 s ago does not; the
 * same for `nbf`), and an HMAC-signed token is refused for its algorithm, by the message
 * that says so, not by whatever else might fail on the way. A real `twylt-mcp --http
 * --auth-issuer` against the authorization server of tests/support/auth-server.ts.
 */
import { createPublicKey } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthServer, type AuthServer } from '../support/auth-server.js';
import { SLEEPER } from '../support/mcp.js';
import { MCP_HEADERS, rawRequest, sseMessages, startHttpBridge, toolsCall, type HttpBridgeProcess } from '../support/mcp-http.js';

const now = () => Math.floor(Date.now() / 1000);

let as: AuthServer;
let bridge: HttpBridgeProcess;

beforeAll(async () => {
  as = await startAuthServer();
  bridge = await startHttpBridge(['--auth-issuer', as.issuer, '--auth-scope', 'mcp', '--', ...SLEEPER]);
}, 60_000);
afterAll(async () => {
  await bridge?.stop();
  await as?.close();
});

/** A token with every claim right but `claims`, signed by the issuer's key (or `key`, with `alg`). */
async function token(claims: Record<string, unknown>, options: { alg?: string; key?: Uint8Array } = {}): Promise<string> {
  const { kid, privateKey } = as.key();
  const good = { iss: as.issuer, aud: bridge.url, sub: 'tester', client_id: 'tester', scope: 'mcp', iat: now() - 120, exp: now() + 300 };
  return new SignJWT({ ...good, ...claims }).setProtectedHeader({ alg: options.alg ?? 'ES256', kid, typ: 'at+jwt' }).sign(options.key ?? privateKey);
}

/** A call of the sleeper with `bearer`: the HTTP status and, when refused, the reason. */
async function callWith(bearer: string): Promise<{ status: number; reason?: string; challenge?: string }> {
  const answer = await rawRequest(bridge.url, { headers: { ...MCP_HEADERS, authorization: `Bearer ${bearer}` }, body: toolsCall(1, 'sleeper', { action: 'wait' }) });
  if (answer.status === 200) {
    expect(sseMessages(answer.body)[0]!.result.isError).toBeFalsy();
    return { status: 200 };
  }
  return { status: answer.status, reason: JSON.parse(answer.body).error.message, challenge: String(answer.headers['www-authenticate']) };
}

describe('the clock leeway is 30 seconds', () => {
  it('a token expired 10 s ago is accepted', async () => {
    expect(await callWith(await token({ exp: now() - 10 }))).toEqual({ status: 200 });
  });

  it('a token expired 60 s ago is refused for its "exp"', async () => {
    const refused = await callWith(await token({ exp: now() - 60 }));
    expect(refused.status).toBe(401);
    expect(refused.reason).toBe('invalid token: "exp" claim timestamp check failed');
    expect(refused.challenge).toContain('error="invalid_token"');
  });

  it('a token valid from 10 s ahead is accepted', async () => {
    expect(await callWith(await token({ nbf: now() + 10 }))).toEqual({ status: 200 });
  });

  it('a token valid only from 60 s ahead is refused for its "nbf"', async () => {
    const refused = await callWith(await token({ nbf: now() + 60 }));
    expect(refused.status).toBe(401);
    expect(refused.reason).toBe('invalid token: "nbf" claim timestamp check failed');
  });
});

describe('asymmetric algorithms only', () => {
  it('HS256, keyed with the issuer\'s public key: refused because the algorithm is not allowed', async () => {
    const pem = createPublicKey({ key: as.key().publicJwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
    const refused = await callWith(await token({}, { alg: 'HS256', key: new TextEncoder().encode(pem) }));
    expect(refused.status).toBe(401);
    expect(refused.reason).toBe('invalid token: "alg" (Algorithm) Header Parameter value not allowed');
  });

  it('HS256 with any other secret: refused the same way', async () => {
    const refused = await callWith(await token({}, { alg: 'HS256', key: new TextEncoder().encode('a shared secret of 32 bytes or more!') }));
    expect(refused.status).toBe(401);
    expect(refused.reason).toBe('invalid token: "alg" (Algorithm) Header Parameter value not allowed');
  });
});
