/** Binding a consumer server: where, and whether it is safe to. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLoopback } from './access.js';

/** The default: this machine only. */
export const DEFAULT_HOST = '127.0.0.1';

/**
 * `[HOST:]PORT` as typed after a flag: `8080`, `0` (any free port), `0.0.0.0:8080`,
 * `[::1]:8080`. Throws a RangeError that says what is wrong.
 */
export function parseListenAddress(text: string, defaultHost = DEFAULT_HOST): { host: string; port: number } {
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d+)$/.exec(text.trim());
  const port = Number(match?.[2]);
  if (!match || !Number.isInteger(port) || port > 65535) {
    throw new RangeError(`expected [HOST:]PORT (for example 8080, 0 for any free port, or 0.0.0.0:8080), got ${JSON.stringify(text)}`);
  }
  return { host: match[1]?.replace(/^\[(.*)\]$/, '$1') ?? defaultHost, port };
}

/**
 * Refuse to serve beyond this machine without a token: anyone who can reach the port
 * could otherwise run the tools.
 */
export function assertSafeBind(host: string, hasToken: boolean, how: string): void {
  if (!isLoopback(host) && !hasToken) {
    throw new Error(`refusing to listen on ${host} without a token: anyone who can reach it could run the tools; ${how}`);
  }
}

/** Listen and resolve with the port really bound (port 0 picks a free one). */
export function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
