/**
 * The filtering proxy for the hosts a sandboxed tool may reach (ADR 0032). A sandbox has no
 * network of its own; the consumer runs one proxy per tool allowed some host (bwrap.ts), on
 * a Unix socket bound into that tool's sandboxes, where a small relay (relay.ts) offers it
 * as 127.0.0.1:RELAY_PORT, named in HTTP_PROXY and HTTPS_PROXY. It takes `CONNECT host:port` (https and any TCP) and
 * absolute-form requests (`GET http://host/...`), and opens a connection only to an allowed
 * host; anything else gets 403 and is published as a refusal.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The port the relay listens on inside each sandbox (its own network namespace: always free). */
export const RELAY_PORT = 3128;
/** Where the proxy's socket appears inside a sandbox. */
export const SANDBOX_PROXY_SOCKET = '/run/twylt-proxy.sock';

const MAX_HEAD_BYTES = 16 * 1024;

export interface FilteringProxy {
  /** The Unix socket the proxy listens on (outside the sandbox). */
  readonly socket: string;
  close(): Promise<void>;
}

/** `host`, `host:port` or `*.domain[:port]`; without a port, 80 and 443. */
export function hostAllowed(allowed: readonly string[], host: string, port: number): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  return allowed.some((entry) => {
    const match = /^(.*?)(?::(\d+))?$/.exec(entry.toLowerCase())!;
    const pattern = match[1]!.replace(/^\[|\]$/g, '');
    const ports = match[2] ? [Number(match[2])] : [80, 443];
    if (!ports.includes(port)) return false;
    return pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) : name === pattern;
  });
}

/**
 * Start the proxy; `onRefusal` hears of each host refused. Synchronous, so that a sandbox can
 * be given its proxy as it is set up: a Unix socket is bound and listening when
 * `listen()` returns (`exclusive`: never handed to a cluster's primary). Throws when it cannot listen.
 */
export function startProxy(allowed: readonly string[], onRefusal: (host: string) => void): FilteringProxy {
  const dir = mkdtempSync(join(tmpdir(), 'twylt-proxy-'));
  const socket = join(dir, 'proxy.sock');
  const server = createServer((client) => serve(client, allowed, onRefusal));
  // A failure to listen is also emitted later; it is reported here, by the throw below.
  server.on('error', () => {});
  server.listen({ path: socket, exclusive: true });
  if (!server.listening) {
    server.close();
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`the sandbox's proxy cannot listen on ${socket}`);
  }
  // The consumer's event loop is not held by the proxy.
  server.unref();
  return {
    socket,
    close: () =>
      new Promise((resolve) => {
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}

function serve(client: Socket, allowed: readonly string[], onRefusal: (host: string) => void): void {
  let head = Buffer.alloc(0);
  client.on('error', () => client.destroy());
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end === -1) {
      if (head.length > MAX_HEAD_BYTES) answer(client, 431, 'request head too large');
      return;
    }
    client.off('data', onData);
    client.pause();
    const text = head.subarray(0, end).toString('latin1');
    const rest = head.subarray(end + 4);
    const [line = '', ...headers] = text.split('\r\n');
    const [method = '', target = '', version = 'HTTP/1.1'] = line.split(' ');
    const destination = parseTarget(method, target);
    if (!destination) {
      answer(client, 400, 'the proxy takes CONNECT host:port and absolute-form http:// requests');
      return;
    }
    if (!hostAllowed(allowed, destination.host, destination.port)) {
      onRefusal(destination.host);
      answer(client, 403, `twylt sandbox: ${destination.host}:${destination.port} is not an allowed host (--sandbox-allow-net)`);
      return;
    }
    const upstream = connect(destination.port, destination.host);
    upstream.on('error', () => {
      if (!client.destroyed) answer(client, 502, `cannot reach ${destination.host}:${destination.port}`);
    });
    upstream.on('connect', () => {
      if (method === 'CONNECT') client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      else upstream.write(`${method} ${destination.path} ${version}\r\n${headers.join('\r\n')}\r\n\r\n`);
      if (rest.length > 0) upstream.write(rest);
      client.pipe(upstream).pipe(client);
      client.resume();
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  };
  client.on('data', onData);
}

function parseTarget(method: string, target: string): { host: string; port: number; path: string } | undefined {
  if (method === 'CONNECT') {
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(target);
    return match ? { host: match[1]!.replace(/^\[|\]$/g, ''), port: Number(match[2]), path: '' } : undefined;
  }
  try {
    const url = new URL(target);
    if (url.protocol !== 'http:') return undefined;
    return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 80), path: `${url.pathname}${url.search}` };
  } catch {
    return undefined;
  }
}

function answer(client: Socket, status: number, message: string): void {
  const reason = { 400: 'Bad Request', 403: 'Forbidden', 431: 'Request Header Fields Too Large', 502: 'Bad Gateway' }[status] ?? 'Error';
  client.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(message)}\r\nConnection: close\r\n\r\n${message}`);
}
