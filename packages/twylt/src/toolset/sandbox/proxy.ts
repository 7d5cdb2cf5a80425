/**
 * The filtering proxy for the hosts a sandboxed tool may reach (ADR 0032). A sandbox has no
 * network of its own; the consumer runs one proxy per tool allowed some host (bwrap.ts), and
 * each call of that tool gets a session of it: a Unix socket of its own bound into that
 * call's sandbox, where a small relay (relay.ts) offers it as 127.0.0.1:RELAY_PORT, named in
 * HTTP_PROXY and HTTPS_PROXY. It takes `CONNECT host:port` (https and any TCP) and
 * absolute-form requests (`GET http://host/...`), and opens a connection only to an allowed
 * host; anything else gets 403 and is reported as a refusal. A session holds at most
 * MAX_CONNECTIONS_PER_CALL connections, drops one idle for CONNECTION_IDLE_MS, and ends
 * every one of them when its call ends: a tool cannot exhaust the consumer's descriptors.
 */
import { AsyncResource } from 'node:async_hooks';
import { lookup as dnsLookup } from 'node:dns/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { BlockList, connect, createServer, isIP, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

/** The port the relay listens on inside each sandbox (its own network namespace: always free). */
export const RELAY_PORT = 3128;
/** Where the proxy's socket appears inside a sandbox. */
export const SANDBOX_PROXY_SOCKET = '/run/twylt-proxy.sock';
/** Connections (tunnels and plain requests) one call may have open at once; the next is answered 429. */
export const MAX_CONNECTIONS_PER_CALL = 64;
/** A connection with no byte either way for this long is closed (a request head must arrive within it too). */
export const CONNECTION_IDLE_MS = 60_000;

const MAX_HEAD_BYTES = 16 * 1024;

/** One address a name resolves to. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Why a connection was refused, for the operator's log and the refusals counter. */
export interface ProxyRefusal {
  /** The host asked for, when the request named one. */
  host?: string;
  port?: number;
  /** One sentence: what was refused and why. */
  message: string;
}

/** A refusal for the operator: the line to print, and its parts for a log that writes fields. */
export type RefusalLog = (line: string, refusal: ProxyRefusal & { tool?: string }) => void;

export interface ProxyOptions {
  /** Hears of each connection refused (a host not allowed, a private address, the cap). */
  onRefusal?: (refusal: ProxyRefusal) => void;
  /** The operator's log: one line per refusal, the same refusal at most once a minute (a tool may retry in a loop). */
  log?: RefusalLog;
  /** The tool's name, for the log (a session may name its own). */
  tool?: string;
  /** How names are resolved (default: the system's resolver, every address). */
  lookup?: (host: string) => Promise<ResolvedAddress[]>;
  maxConnections?: number;
  idleMs?: number;
}

export interface FilteringProxy {
  /**
   * A session for one call: a Unix socket of its own (outside the sandbox), listening when
   * this returns. Throws when it cannot listen (out of descriptors).
   */
  open(call?: SessionOptions): ProxySession;
  /** Close every session and remove the proxy's folder. */
  close(): Promise<void>;
}

export interface SessionOptions {
  /** The tool's name, when its entry has one. */
  tool?: string;
  /** Its command, which names it in the log otherwise. */
  command?: readonly string[];
}

export interface ProxySession {
  readonly socket: string;
  /** Connections open now (tunnels and requests, each with its upstream). */
  readonly connections: number;
  /** A warm process's session, taken by a call: its refusals are reported in that call's context from now on. */
  adopt(): void;
  /** Stop listening and end every connection of the call. */
  close(): void;
}

/** Which entry lets `host:port` through: an exact host or address the operator wrote, a wildcard, or none. */
export function hostMatch(allowed: readonly string[], host: string, port: number): 'exact' | 'wildcard' | undefined {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  let match: 'exact' | 'wildcard' | undefined;
  for (const entry of allowed) {
    const lower = entry.toLowerCase();
    // A bare IPv6 address (`::1`) has no port: its last group is not one.
    const parts = /^[^[]*:.*:/.test(lower) ? [lower, lower] : /^(.*?)(?::(\d+))?$/.exec(lower)!;
    const pattern = parts[1]!.replace(/^\[|\]$/g, '');
    const ports = parts[2] ? [Number(parts[2])] : [80, 443];
    if (!ports.includes(port)) continue;
    // `*.example.com` is its subdomains: a dot before the suffix, and something before the dot.
    if (pattern.startsWith('*.')) {
      const suffix = pattern.slice(1);
      if (name.length > suffix.length && name.endsWith(suffix)) match ??= 'wildcard';
    } else if (name === pattern) return 'exact';
  }
  return match;
}

/** `host`, `host:port` or `*.domain[:port]`; without a port, 80 and 443. */
export function hostAllowed(allowed: readonly string[], host: string, port: number): boolean {
  return hostMatch(allowed, host, port) !== undefined;
}

/** Addresses a wildcard entry never reaches: the host's own, link-local, private, and unroutable ones. */
const INTERNAL = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  INTERNAL.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  INTERNAL.addSubnet(net, prefix, 'ipv6');
}

/** Loopback, link-local, private or unroutable (IPv4 in IPv6 forms checked as IPv4). */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return INTERNAL.check(address, 'ipv4');
  if (family !== 6) return true;
  const embedded = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (embedded) return INTERNAL.check(embedded[1]!, 'ipv4');
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (mapped) {
    const [high, low] = [Number.parseInt(mapped[1]!, 16), Number.parseInt(mapped[2]!, 16)];
    return INTERNAL.check(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, 'ipv4');
  }
  // Stryker disable next-line StringLiteral: a family '' is read from the address on Node.js 24+ (Stryker's runtime); on Node.js 20 and 22, Bun and Deno it is IPv4, and paths.test's `::1: internal` row fails
  return INTERNAL.check(address, 'ipv6');
}

const REFUSAL_LOG_INTERVAL_MS = 60_000;

/** A refusal as the operator reads it: which tool, which host, why. */
export function refusalLine(tool: SessionOptions, refusal: ProxyRefusal): string {
  const name = toolName(tool);
  const who = name === undefined ? 'a tool' : tool.tool !== undefined ? `tool ${JSON.stringify(name)}` : `the tool ${JSON.stringify(name)}`;
  const host = printableHost(refusal.host);
  const what = host === undefined ? 'a connection' : `a connection to ${host.includes(':') ? `[${host}]` : host}:${refusal.port}`;
  return `twylt sandbox: refused ${what} of ${who}: ${refusal.message.replace(/^twylt sandbox: /, '').replace(/[^\x20-\x7e]/g, '?')}`;
}

/** The refusal's parts for a log that writes fields: the tool's name, a printable host. */
function refusalFields(tool: SessionOptions, refusal: ProxyRefusal): ProxyRefusal & { tool?: string } {
  const name = toolName(tool);
  const host = printableHost(refusal.host);
  return { ...(name !== undefined ? { tool: name } : {}), ...(host !== undefined ? { host, port: refusal.port } : {}), message: refusal.message };
}

/** The tool's entry name, else its files (not its input, the argv transport's JSON, nor options). */
function toolName(tool: SessionOptions): string | undefined {
  if (tool.tool !== undefined) return tool.tool;
  if (tool.command === undefined) return undefined;
  return tool.command
    .filter((arg) => !arg.startsWith('{') && !arg.startsWith('-'))
    .map((arg) => basename(arg))
    .join(' ')
    .slice(0, 120);
}

/** The host is the tool's text: printable, bounded. */
function printableHost(host: string | undefined): string | undefined {
  return host?.replace(/[^\x21-\x7e]/g, '?').slice(0, 255);
}

const systemLookup = async (host: string): Promise<ResolvedAddress[]> => dnsLookup(host, { all: true, verbatim: true });

/**
 * Start the proxy of one tool's allow-list. Synchronous, so that a sandbox can be given a
 * session as it is set up. Throws when its folder cannot be made.
 */
export function startProxy(allowed: readonly string[], options: ProxyOptions = {}): FilteringProxy {
  const dir = mkdtempSync(join(tmpdir(), 'twylt-proxy-'));
  const sessions = new Set<ProxySession>();
  let count = 0;
  const logged = new Map<string, number>();
  const settings: Settings = {
    allowed,
    onRefusal: (refusal, call = {}) => {
      options.onRefusal?.(refusal);
      if (!options.log) return;
      const key = `${refusal.host ?? ''}:${refusal.port ?? ''}:${refusal.host === undefined ? refusal.message : ''}`;
      const now = Date.now();
      if ((logged.get(key) ?? -Infinity) > now - REFUSAL_LOG_INTERVAL_MS) return;
      if (logged.size >= 1000) logged.clear();
      logged.set(key, now);
      const who = { tool: options.tool, ...call };
      options.log(refusalLine(who, refusal), refusalFields(who, refusal));
    },
    lookup: options.lookup ?? systemLookup,
    maxConnections: options.maxConnections ?? MAX_CONNECTIONS_PER_CALL,
    idleMs: options.idleMs ?? CONNECTION_IDLE_MS,
  };
  return {
    open: (call = {}) => {
      const session = openSession(join(dir, `call-${++count}.sock`), settings, call, () => sessions.delete(session));
      sessions.add(session);
      return session;
    },
    close: async () => {
      for (const session of [...sessions]) session.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Settings {
  allowed: readonly string[];
  onRefusal: (refusal: ProxyRefusal, call?: SessionOptions) => void;
  lookup: (host: string) => Promise<ResolvedAddress[]>;
  maxConnections: number;
  idleMs: number;
}

function openSession(socket: string, shared: Settings, call: SessionOptions, closed: () => void): ProxySession {
  // Refusals are reported in the context of the call that opened the session (its tool's
  // label in the metrics), not in the context of whatever accepted the connection.
  let context = new AsyncResource('TwyltProxySession');
  const settings: Settings = { ...shared, onRefusal: (refusal) => context.runInAsyncScope(() => shared.onRefusal(refusal, call)) };
  /** Every socket of the call: the tool's connections and their upstreams. */
  const open = new Set<Socket>();
  let connections = 0;
  const server = createServer((client) => {
    if (connections >= settings.maxConnections) {
      // Answered at once, without waiting for its request: a refused connection holds nothing for long.
      const message = `twylt sandbox: this call has ${settings.maxConnections} connections open through the proxy, the most one call may have; close one first`;
      settings.onRefusal({ message });
      client.on('error', () => client.destroy());
      answer(client, 429, message);
      return;
    }
    connections++;
    open.add(client);
    client.once('close', () => {
      connections--;
      open.delete(client);
    });
    serve(client, settings, (upstream) => {
      open.add(upstream);
      upstream.once('close', () => open.delete(upstream));
    });
  });
  // A failure to listen is also emitted later; it is reported here, by the throw below.
  server.on('error', () => {});
  server.listen({ path: socket, exclusive: true });
  if (!server.listening) {
    server.close();
    throw new Error(`the sandbox's proxy cannot listen on ${socket}`);
  }
  // The consumer's event loop is not held by the proxy.
  server.unref();
  let ended = false;
  return {
    socket,
    get connections() {
      return connections;
    },
    adopt: () => {
      context.emitDestroy();
      context = new AsyncResource('TwyltProxySession');
    },
    close: () => {
      if (ended) return;
      ended = true;
      // close() also removes the socket file.
      server.close();
      for (const each of open) each.destroy();
      open.clear();
      context.emitDestroy();
      closed();
    },
  };
}

function serve(client: Socket, settings: Settings, opened: (upstream: Socket) => void): void {
  let head = Buffer.alloc(0);
  client.on('error', () => client.destroy());
  // Idle either way: no request head, or a tunnel nobody uses.
  client.setTimeout(settings.idleMs, () => client.destroy());
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
    const { host, port } = destination;
    const refuse = (message: string) => {
      settings.onRefusal({ host, port, message });
      answer(client, 403, message);
    };
    const match = hostMatch(settings.allowed, host, port);
    if (!match) {
      refuse(`twylt sandbox: ${host}:${port} is not an allowed host (--sandbox-allow-net)`);
      return;
    }
    // An address literal is its own answer; a name is resolved once, here.
    const family = isIP(host);
    const resolved = family !== 0 ? Promise.resolve([{ address: host, family }]) : settings.lookup(host);
    resolved.then(
      (addresses) => {
        if (client.destroyed) return;
        // No address is answered as no name: a throw here would be an unhandled rejection
        // (the end of the consumer), and the tool would wait for an answer that never comes.
        if (addresses.length === 0) {
          answer(client, 502, `cannot resolve ${host}`);
          return;
        }
        // A wildcard names hosts on the internet: never one that resolves to this machine or its network.
        const internal = match === 'wildcard' ? addresses.find(({ address }) => isInternalAddress(address)) : undefined;
        if (internal) {
          refuse(`twylt sandbox: ${host} resolves to ${internal.address}, a loopback, link-local or private address, which a wildcard entry never reaches (allow the host itself)`);
          return;
        }
        // The address checked is the one connected to: no second lookup.
        tunnel(client, addresses[0]!.address, destination, { method, version, headers, rest }, opened);
      },
      () => {
        if (!client.destroyed) answer(client, 502, `cannot resolve ${host}`);
      },
    );
  };
  client.on('data', onData);
}

function tunnel(
  client: Socket,
  address: string,
  destination: { host: string; port: number; path: string },
  request: { method: string; version: string; headers: string[]; rest: Buffer },
  opened: (upstream: Socket) => void,
): void {
  const upstream = connect({ host: address, port: destination.port });
  opened(upstream);
  let connected = false;
  upstream.on('error', () => {
    // Before the tunnel: an answer; within it: the end of it.
    if (connected) client.destroy();
    else if (!client.destroyed) answer(client, 502, `cannot reach ${destination.host}:${destination.port}`);
  });
  upstream.on('connect', () => {
    connected = true;
    if (request.method === 'CONNECT') client.write('HTTP/1.1 200 Connection established\r\n\r\n');
    else upstream.write(`${request.method} ${destination.path} ${request.version}\r\n${request.headers.join('\r\n')}\r\n\r\n`);
    if (request.rest.length > 0) upstream.write(request.rest);
    client.pipe(upstream).pipe(client);
    client.resume();
    upstream.on('close', () => client.destroy());
  });
  client.on('close', () => upstream.destroy());
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

/** How long a refused connection may stay open after its answer, for the tool to read it. */
const ANSWER_GRACE_MS = 1000;

function answer(client: Socket, status: number, message: string): void {
  const reason = { 400: 'Bad Request', 403: 'Forbidden', 429: 'Too Many Requests', 431: 'Request Header Fields Too Large', 502: 'Bad Gateway' }[status] ?? 'Error';
  // Whatever else the tool sends is read and dropped: a socket closed with unread bytes is
  // reset, and the tool would see that instead of the answer.
  client.removeAllListeners('data');
  client.on('data', () => {});
  client.resume();
  client.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(message)}\r\nConnection: close\r\n\r\n${message}`);
  // Closed when the tool closes its end, or shortly after the answer whatever it does.
  const timer = setTimeout(() => client.destroy(), ANSWER_GRACE_MS);
  timer.unref();
  client.once('close', () => clearTimeout(timer));
}
