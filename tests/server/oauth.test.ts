/**
 * The OAuth pieces of twylt/server on their own: where an issuer's and a resource's
 * metadata live, which URLs may name an authorization server, how scopes are read, and
 * createResourceServer against an issuer laid out as Keycloak lays out a realm (the
 * metadata only at `/realms/NAME/.well-known/openid-configuration`, `azp` instead of
 * `client_id`, Entra's `scp`), on a real node:http server on 127.0.0.1.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authServerUrl,
  createResourceServer,
  issuerMetadataUrls,
  mayCallTool,
  resourceMetadataPaths,
  resourceMetadataUrl,
  scopesOf,
} from '../../packages/twylt/src/server/index.js';

describe('URLs', () => {
  it('tries OAuth metadata first, then OpenID Connect inserted and appended', () => {
    expect(issuerMetadataUrls('https://sso.example.com/realms/acme')).toEqual([
      'https://sso.example.com/.well-known/oauth-authorization-server/realms/acme',
      'https://sso.example.com/.well-known/openid-configuration/realms/acme',
      'https://sso.example.com/realms/acme/.well-known/openid-configuration',
    ]);
    expect(issuerMetadataUrls('https://tenant.auth0.com/')).toEqual([
      'https://tenant.auth0.com/.well-known/oauth-authorization-server',
      'https://tenant.auth0.com/.well-known/openid-configuration',
    ]);
  });

  it('puts the resource metadata before the resource path (RFC 9728)', () => {
    expect(resourceMetadataUrl('https://mcp.example.com/mcp')).toBe('https://mcp.example.com/.well-known/oauth-protected-resource/mcp');
    expect(resourceMetadataUrl('https://mcp.example.com/')).toBe('https://mcp.example.com/.well-known/oauth-protected-resource');
    expect(resourceMetadataPaths('https://mcp.example.com/tools/mcp')).toEqual(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/tools/mcp']);
  });

  it('takes https for an authorization server, http on loopback only', () => {
    expect(authServerUrl('https://sso.example.com/realms/acme').host).toBe('sso.example.com');
    expect(authServerUrl('http://127.0.0.1:8080').port).toBe('8080');
    expect(authServerUrl('http://localhost:8080').hostname).toBe('localhost');
    expect(() => authServerUrl('http://sso.example.com')).toThrow(/must be an https URL/);
    expect(() => authServerUrl('sso.example.com')).toThrow(/is not a URL/);
    expect(() => authServerUrl('https://sso.example.com/?x=1')).toThrow(/query or a fragment/);
  });
});

describe('scopes', () => {
  it('reads scope and scp, and grants a tool by its own scope or tools:*', () => {
    expect(scopesOf({ scope: 'mcp  tools:echo' })).toEqual(['mcp', 'tools:echo']);
    expect(scopesOf({ scp: ['mcp', 'tools:*', 7] })).toEqual(['mcp', 'tools:*']);
    expect(mayCallTool({ scopes: ['tools:echo'] }, 'echo')).toBe(true);
    expect(mayCallTool({ scopes: ['tools:echo'] }, 'echo2')).toBe(false);
    expect(mayCallTool({ scopes: ['tools:*'] }, 'anything')).toBe(true);
    expect(mayCallTool({}, 'anything')).toBe(true); // a shared token: no scopes to go by
  });
});

describe('an issuer laid out as a Keycloak realm', () => {
  let http: Server;
  let issuer: string;
  let privateKey: CryptoKey;
  const paths: string[] = [];
  const resource = 'https://mcp.example.com/mcp';
  beforeAll(async () => {
    const pair = await generateKeyPair('RS256');
    privateKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'realm-key', alg: 'RS256', use: 'sig' };
    http = createServer((request: IncomingMessage, response) => {
      paths.push(request.url ?? '');
      const answers: Record<string, unknown> = {
        '/realms/acme/.well-known/openid-configuration': { issuer, jwks_uri: `${issuer}/protocol/openid-connect/certs` },
        '/realms/acme/protocol/openid-connect/certs': { keys: [jwk] },
      };
      const answer = answers[request.url ?? ''];
      response.writeHead(answer ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(answer ?? { error: 'not found' }));
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}/realms/acme`;
  });
  afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())));

  it('is discovered at the appended path, and its tokens name their caller by sub and azp', async () => {
    const server = await createResourceServer({ issuer, resource, requiredScopes: ['mcp'] });
    expect(paths.slice(0, 3)).toEqual([
      '/.well-known/oauth-authorization-server/realms/acme',
      '/.well-known/openid-configuration/realms/acme',
      '/realms/acme/.well-known/openid-configuration',
    ]);
    const token = await new SignJWT({ scp: ['mcp', 'tools:echo'], azp: 'claude-connector' })
      .setProtectedHeader({ alg: 'RS256', kid: 'realm-key', typ: 'JWT' })
      .setIssuer(issuer)
      .setAudience(['account', resource])
      .setSubject('7f1c0b1e')
      .setExpirationTime('5m')
      .sign(privateKey);
    const request = { headers: { authorization: `Bearer ${token}` } } as IncomingMessage;
    expect(await server.authenticate(request)).toEqual({ caller: { sub: '7f1c0b1e', clientId: 'claude-connector', scopes: ['mcp', 'tools:echo'] } });
    expect(server.metadataUrl).toBe('https://mcp.example.com/.well-known/oauth-protected-resource/mcp');
  });

  it('refuses to start when the metadata names another issuer', async () => {
    await expect(createResourceServer({ issuer: `${issuer}/`, resource })).rejects.toThrow(/names the issuer .* not /);
  });
});
