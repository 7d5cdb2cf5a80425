/**
 * The `/metrics` endpoint: Prometheus text on its own port, under the rules of every consumer
 * server here (ADR 0013): loopback by default, Host checked against DNS rebinding, and beyond
 * loopback only with a bearer token, which every scrape must then send.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { checkAccess, hostPort, hostsFor, type AccessPolicy } from '../server/access.js';
import { assertSafeBind, listen } from '../server/listen.js';
import type { Registry } from './registry.js';

export const METRICS_PATH = '/metrics';
/** The Prometheus text exposition format. */
const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface MetricsEndpoint {
  /** `http://HOST:PORT/metrics`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface MetricsServeOptions {
  host: string;
  port: number;
  /** Required beyond loopback: a scrape must send `Authorization: Bearer TOKEN`. */
  token?: string;
}

/** Listen; rejects with an Error that says why it cannot (binding refused, port taken). */
export async function serveMetrics(registry: Registry, options: MetricsServeOptions): Promise<MetricsEndpoint> {
  const { host, token } = options;
  assertSafeBind(host, token !== undefined, 'give the bridge a token (TWYLT_MCP_TOKEN or --token-file), which every scrape must then send, or keep --metrics on loopback');
  let policy: AccessPolicy = { hosts: [], origins: [], token };
  const server = createServer((request, response) => answer(request, response, registry, policy));
  server.on('clientError', (_error, socket) => socket.destroy());
  let address;
  try {
    address = await listen(server, host, options.port);
  } catch (error) {
    throw new Error(`--metrics: cannot listen on ${hostPort(host, options.port)}: ${(error as Error).message}`);
  }
  // With a token, any Host: a rebinding page cannot send the token (as --http does).
  policy = { ...policy, hosts: token === undefined ? hostsFor(host, address.port) : 'any' };
  return {
    url: `http://${hostPort(host, address.port)}${METRICS_PATH}`,
    port: address.port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function answer(request: IncomingMessage, response: ServerResponse, registry: Registry, policy: AccessPolicy): void {
  const refusal = checkAccess(request, policy);
  if (refusal) {
    plain(response, refusal.status, `${refusal.reason}\n`);
  } else if (new URL(request.url ?? '/', 'http://x').pathname !== METRICS_PATH) {
    plain(response, 404, `metrics are at ${METRICS_PATH}\n`);
  } else if (request.method !== 'GET' && request.method !== 'HEAD') {
    plain(response, 405, 'GET only\n', { allow: 'GET, HEAD' });
  } else {
    response.writeHead(200, { 'content-type': CONTENT_TYPE, 'cache-control': 'no-store' });
    response.end(request.method === 'HEAD' ? undefined : registry.render());
  }
}

function plain(response: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers }).end(text);
}
