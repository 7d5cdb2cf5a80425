/**
 * Serve a set of tools over MCP's Streamable HTTP transport, stateless: every POST stands
 * alone (a fresh SDK Server and transport over the tools served at that moment: those
 * described at start-up, and any left out then that a retry described since, retry.ts),
 * so any replica behind a load balancer can answer any request. ADR 0013 has the reasons.
 *
 * In front of the SDK, on every request: the Host and Origin checks of twylt/server, the
 * credential (a shared token, or an OAuth access token: one Authenticator either way), a
 * bounded body, and our own JSON parse that keeps a caller's numbers exact. Behind it:
 * one CallLimiter bounds the tool processes of all requests together.
 */
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server as NodeHttpServer, type ServerResponse } from 'node:http';
import { Server as NetServer, type AddressInfo, type Socket } from 'node:net';
import { availableParallelism } from 'node:os';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { hasJsonNumber } from 'twylt/client';
import {
  ALL_TOOLS_SCOPE,
  BodyTooLargeError,
  DEFAULT_HOST,
  RESOURCE_METADATA_PATH,
  anyone,
  assertSafeBind,
  checkAccess,
  createResourceServer,
  hostPort,
  hostsFor,
  isLoopback,
  listen,
  mayCallTool,
  parseBoundedJson,
  readBody,
  resourceMetadataPaths,
  tokenAuthenticator,
  toolScope,
  type AccessPolicy,
  type Authenticator,
  type Caller,
  type Denial,
  type OAuthOptions,
  type ResourceServer,
} from 'twylt/server';
import { CallLimiter, isRecord, refusalChannel, type EmbeddingsFlags, type RefusalMessage, type ToolEntry } from 'twylt/toolset';
import { normalizeOrigin } from './args.js';
import { CALL_TOOL } from './catalog.js';
import { openExchange, type Exchange } from './exchange.js';
import type { CatalogMode } from './args.js';
import { invalidParamsAnswer } from './invalid-params.js';
import { stderrEventLog, stderrLog, type EventLog } from './log.js';
import type { CallRecord } from './outcome.js';
import { BUSY_ERROR_CODE, DEFAULT_MAX_QUEUE, createServer } from './server.js';
import { ServedTools, retryLeftOut, type RetryOptions } from './retry.js';
import { CatalogSearch } from './search.js';
import { StartupError, describeTools } from './tools.js';

export const MCP_PATH = '/mcp';
export const HEALTH_PATH = '/healthz';
/** The SDK's own default: a tool's input above it must come another way. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Below Kubernetes' default 30 s termination grace, so the bridge gets to kill its tools. */
export const DEFAULT_GRACE_MS = 25_000;

/** JSON-RPC codes of the errors the HTTP layer answers before the SDK sees a request. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const SERVER_ERROR = -32000;

/**
 * A request refused before its body was read (no token, a bad one) has its JSON-RPC id
 * looked up in a body this small at most, declared by Content-Length and arriving within
 * PEEK_BODY_MS; a larger or slower one is answered with `"id": null` unread.
 */
const PEEK_BODY_BYTES = 64 * 1024;
const PEEK_BODY_MS = 2000;
/** The longest tool name a log line carries whole; a name nobody serves can be any length. */
const MAX_LOGGED_NAME_CHARS = 200;

/** The header that carries the correlation id a client gets at initialize (see cancelKey). */
const SESSION_HEADER = 'mcp-session-id';

export interface HttpOptions extends RetryOptions {
  /** Address to bind (default 127.0.0.1). */
  host?: string;
  /** Port to bind; 0 picks a free one. */
  port: number;
  /** The bearer token every request to /mcp must carry; required beyond loopback, unless `oauth`. */
  token?: string;
  /** Be an OAuth 2.1 resource server of this issuer instead of taking one token (not with `token`). */
  oauth?: HttpOAuthOptions;
  /** Browser origins (`https://app.example.com`) allowed to call; others get 403. */
  allowOrigins?: readonly string[];
  /**
   * Host header values accepted (`NAME` or `NAME:PORT`). Default: the bound address and,
   * on loopback, the loopback names; with a token and no list, any Host (ADR 0013).
   */
  allowHosts?: readonly string[];
  /** Tool processes at once (default: the number of CPUs). */
  maxConcurrency?: number;
  /** Calls that may wait for a slot (default 100). */
  maxQueue?: number;
  /** Largest request body, in bytes (default 4 MiB). */
  maxBodyBytes?: number;
  /** Write each call's arguments into its log line (they may hold secrets: off by default). */
  logInput?: boolean;
  /** Where the structured log lines go (default: stderr, one JSON object per line). */
  events?: EventLog;
  /** One MCP tool per TWYLT tool (default), or browse mode's two (ADR 0025), or search mode's two. */
  catalog?: CatalogMode;
  /** Search mode: rank by meaning too, through this embeddings endpoint. */
  searchEmbeddings?: EmbeddingsFlags;
  /** Search mode: the catalog files served, whose stored index (`twylt scan --write`) spares building it. */
  searchCatalogs?: readonly string[];
}

/**
 * `resource` defaults to the URL the bridge listens on (`http://HOST:PORT/mcp`), on loopback
 * only: beyond, the URL clients reach it at must be given.
 */
export interface HttpOAuthOptions extends Omit<OAuthOptions, 'resource' | 'offeredScopes'> {
  resource?: string;
  /** A tool needs the scope `tools:NAME` or `tools:*`: tools/list and tools/call per caller. */
  toolScopes?: boolean;
}

export interface HttpBridge {
  /** `http://HOST:PORT/mcp`. */
  url: string;
  address: AddressInfo;
  limiter: CallLimiter;
  /**
   * Stop accepting, let the requests in progress finish for up to `graceMs`, then abort
   * the rest (which kills their tools' process groups) and close every connection.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * Check the binding, describe every tool (rejecting with a StartupError when one cannot be
 * served), then listen. Nothing is spawned before the binding is known to be safe.
 */
export async function serveHttp(entries: readonly ToolEntry[], options: HttpOptions): Promise<HttpBridge> {
  const host = options.host ?? DEFAULT_HOST;
  const { oauth } = options;
  if (oauth && options.token !== undefined) throw new StartupError('give either a token or OAuth (--auth-issuer), not both');
  if (oauth && oauth.resource === undefined && !isLoopback(host)) {
    throw new StartupError(`give --auth-resource URL, the URL clients reach this server at (every token's audience), when listening on ${host}`);
  }
  try {
    assertSafeBind(host, options.token !== undefined || oauth !== undefined, 'set TWYLT_MCP_TOKEN or give --token-file FILE (or use OAuth: --auth-issuer URL)');
  } catch (error) {
    throw new StartupError((error as Error).message);
  }
  const allowOrigins = (options.allowOrigins ?? []).map(normalizeOrigin);
  const events = options.events ?? stderrEventLog;
  const log = options.log ?? stderrLog;
  const leftOut: ToolEntry[] = [];
  // One defaults object for the tools served now and those described again later.
  options = { ...options, defaults: options.defaults ?? {} };
  // A tool left out joins when described again: each request builds its server from `served.current`.
  const served = new ServedTools(await describeTools(entries, { ...options, log, onLeftOut: (entry) => leftOut.push(entry) }));
  // Search mode: one index per tool set, ready before the first request; each request's server shares it.
  const search = options.catalog === 'search' ? new CatalogSearch(options.searchEmbeddings, log, options.searchCatalogs) : undefined;
  await search?.prepare(served.current);
  const limiter = new CallLimiter({ maxConcurrent: options.maxConcurrency ?? availableParallelism(), maxQueue: options.maxQueue ?? DEFAULT_MAX_QUEUE });
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const onCall = (caller: Caller) => (record: CallRecord) => events('call', { ...callFields(record, options.logInput ?? false), ...callerFields(caller) });
  const mcpLog = (message: string) => events('mcp', { message });
  /** Whether a tool of this name is served; the set of names made again only when the tools change. */
  let names: { of: readonly unknown[]; set: ReadonlySet<string> } | undefined;
  const isServed = (name: string) => {
    if (names?.of !== served.current) names = { of: served.current, set: new Set(served.current.map((tool) => tool.definition.name)) };
    return names.set.has(name);
  };

  const exchanges = new Set<Exchange>();
  /** Requests in progress by `cancelKey`, for `notifications/cancelled`. */
  const cancellable = new Map<string, Exchange>();
  let draining = false;
  /** Connections that have carried a request: only those can be a client's keep-alive reuse. */
  const used = new WeakSet<Socket>();
  let policy: AccessPolicy;
  let corsOrigins: ReadonlySet<string> = new Set();
  let authenticator: Authenticator = options.token === undefined ? anyone : tokenAuthenticator(options.token);
  /** With OAuth: the resource server, and the paths of its metadata. */
  let resourceServer: ResourceServer | undefined;
  let metadataPaths: readonly string[] = [];

  const refuse = (request: IncomingMessage, response: ServerResponse, status: number, code: number, reason: string, headers: Record<string, string> = {}) => {
    events('refused', { status, reason, method: request.method, path: pathOf(request), remote: remoteOf(request) });
    if (refusalChannel.hasSubscribers) refusalChannel.publish({ status, reason: refusalReason(status, headers['www-authenticate']) } satisfies RefusalMessage);
    sendError(response, status, code, reason, headers);
  };
  /** A request refused for its credential: its kind and caller logged, its id answered. */
  const deny = (request: IncomingMessage, response: ServerResponse, denial: Denial, caller: Caller | undefined, id: RpcId) => {
    const { status, kind, reason, detail } = denial;
    events('refused', { status, kind, reason, ...(detail !== undefined && { detail }), method: request.method, path: pathOf(request), remote: remoteOf(request), ...callerFields(caller ?? {}) });
    if (refusalChannel.hasSubscribers) refusalChannel.publish({ status, reason: kind } satisfies RefusalMessage);
    // A 503 is the server's fault: the client's token may be good, so no challenge to sign in again.
    const headers: Record<string, string> = {
      ...(denial.challenge === undefined ? { 'retry-after': String(RETRY_AFTER_SECONDS) } : { 'www-authenticate': denial.challenge }),
      ...denial.headers,
    };
    sendError(response, status, SERVER_ERROR, reason, headers, id);
  };

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = pathOf(request);
    if (path === HEALTH_PATH) return health(request, response);
    // While draining, a connection's first request was sent before the port closed (a proxy
    // opens one per request): it is served. A kept connection's next request is refused.
    const reused = used.has(request.socket);
    used.add(request.socket);
    if (draining && reused) return refuse(request, response, 503, BUSY_ERROR_CODE, 'twylt-mcp is shutting down; the request was not run, retry', { connection: 'close' });
    // Public, for any page and any client: how to get a token for this server.
    if (resourceServer && metadataPaths.includes(path)) return resourceMetadata(request, response, resourceServer);
    const origin = request.headers.origin?.toLowerCase();
    if (origin !== undefined && corsOrigins.has(origin)) cors(response, origin);
    if (request.method === 'OPTIONS') {
      // A browser's preflight carries no token; only its Host and Origin can be checked.
      const refusal = checkAccess(request, { ...policy, token: undefined });
      if (refusal || origin === undefined) return refuse(request, response, refusal?.status ?? 403, SERVER_ERROR, refusal?.reason ?? 'a preflight needs an Origin');
      response.writeHead(204, PREFLIGHT_HEADERS).end();
      return;
    }
    const refusal = checkAccess(request, policy);
    if (refusal) return refuse(request, response, refusal.status, SERVER_ERROR, refusal.reason);
    const { caller, denial } = await authenticator.authenticate(request);
    if (denial) return deny(request, response, denial, caller, path === MCP_PATH ? await peekId(request) : null);
    if (path !== MCP_PATH) return refuse(request, response, 404, SERVER_ERROR, `nothing at ${path}; MCP is served at ${MCP_PATH}`);
    // Stateless: there is no session stream to GET and no session to DELETE. MCP clients
    // try the GET after initializing and take 405 as the answer, so it is not logged.
    if (request.method !== 'POST') {
      const reason = `${request.method} is not served: send JSON-RPC messages with POST`;
      if (request.method === 'GET') return sendError(response, 405, SERVER_ERROR, reason, { allow: 'POST' });
      return refuse(request, response, 405, SERVER_ERROR, reason, { allow: 'POST' });
    }

    let body: string;
    try {
      body = await readBody(request, maxBodyBytes);
    } catch (error) {
      if (!(error instanceof BodyTooLargeError)) throw error;
      return refuse(request, response, 413, INVALID_REQUEST, error.message, { connection: 'close' });
    }
    let message: unknown;
    try {
      // A caller's numbers reach the tool as written (2^53 and beyond, 1.0), ADR 0009.
      message = exactArguments(parseBoundedJson(body));
    } catch (error) {
      return refuse(request, response, 400, PARSE_ERROR, `Parse error: ${(error as Error).message}`);
    }

    // Gone while its body was read: nothing to answer, and no 'close' is coming to clean up.
    if (request.socket?.destroyed !== false) return;
    // A request sound but for its params (`"_meta": 5`): answered here with -32602 under its
    // id, as over stdio, where the SDK would refuse the whole body as unparsable (-32700).
    const invalid = Array.isArray(message) ? undefined : invalidParamsAnswer(message);
    if (invalid) {
      events('refused', { status: 200, reason: invalid.error.message, method: request.method, path, remote: remoteOf(request) });
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(invalid));
      return;
    }
    const messages = Array.isArray(message) ? message : [message];
    // A tool the caller may not call is refused before anything runs, so that a client can
    // ask for the scope (MCP's step-up authorization) and call again.
    // Only a tool of the catalog is named back: any other name is unknown, and answered so by the server below.
    const forbidden = resourceServer && oauth?.toolScopes ? messages.map((m) => calledTool(m, options.catalog)).find((name) => name !== undefined && isServed(name) && !mayCallTool(caller, name)) : undefined;
    if (forbidden !== undefined) {
      const scopeDenial = resourceServer!.insufficientScope(caller, [toolScope(forbidden) ?? ALL_TOOLS_SCOPE], `the token grants no access to the tool ${JSON.stringify(forbidden)}`);
      return deny(request, response, scopeDenial, caller, Array.isArray(message) ? null : rpcId(message));
    }
    const session = request.headers[SESSION_HEADER];
    for (const cancel of messages.filter((m) => methodOf(m) === 'notifications/cancelled')) {
      const { requestId, reason } = (cancel as { params?: { requestId?: unknown; reason?: unknown } }).params ?? {};
      cancellable.get(cancelKey(session, requestId))?.cancel(requestId, reason);
    }
    // The correlation id that lets a later cancel find this client's calls; nothing keeps it.
    if (messages.some((m) => methodOf(m) === 'initialize')) response.setHeader(SESSION_HEADER, randomUUID());

    const mayCall = oauth?.toolScopes ? (name: string) => mayCallTool(caller, name) : undefined;
    const transport = { kind: 'http' as const, client: { address: remoteOf(request), port: request.socket?.remotePort } };
    const server: Server = createServer(served.current, { log: mcpLog, limiter, onCall: onCall(caller), mayCall, catalog: options.catalog, search, transport });
    const sdkTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const ids = messages.flatMap((m) => (idOf(m) === undefined ? [] : [idOf(m)]));
    const exchange = openExchange(server, sdkTransport, ids);
    const keys = typeof session === 'string' ? ids.map((id) => cancelKey(session, id)) : [];
    exchanges.add(exchange);
    for (const key of keys) cancellable.set(key, exchange);
    // The answer is sent, or the client went away: either way this exchange is over, and
    // closing it aborts a call still running, which kills the tool's process group.
    response.once('close', () => {
      exchanges.delete(exchange);
      for (const key of keys) if (cancellable.get(key) === exchange) cancellable.delete(key);
      exchange.close();
    });
    // The status line leaves with the answer, not before it (the SDK flushes an event stream's
    // headers at once): if this replica dies mid-call, a load balancer can still answer 502,
    // which a client reports at once, where after a 200 it waits out its own time-out.
    response.flushHeaders = () => {};
    await server.connect(sdkTransport);
    await sdkTransport.handleRequest(request, response, message);
  }

  function resourceMetadata(request: IncomingMessage, response: ServerResponse, server: ResourceServer): void {
    // Any page may read it (the MCP Inspector's does): public, and no credential is involved.
    response.setHeader('access-control-allow-origin', '*');
    if (request.method === 'OPTIONS') {
      response.writeHead(204, { 'access-control-allow-methods': 'GET', 'access-control-allow-headers': 'mcp-protocol-version', 'access-control-max-age': '600' }).end();
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      sendError(response, 405, SERVER_ERROR, `${request.method} is not served at ${pathOf(request)}`, { allow: 'GET, HEAD' });
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
    response.end(JSON.stringify(server.metadata()));
  }

  function health(request: IncomingMessage, response: ServerResponse): void {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      sendError(response, 405, SERVER_ERROR, `${request.method} is not served at ${HEALTH_PATH}`, { allow: 'GET, HEAD' });
      return;
    }
    const status = draining ? 'draining' : 'ok';
    response.writeHead(draining ? 503 : 200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    response.end(JSON.stringify({ status, running: limiter.running, queued: limiter.queued }));
  }

  // Nothing is answered before the access policy is complete (OAuth's set-up runs after listen).
  let started!: () => void;
  const ready = new Promise<void>((resolve) => (started = resolve));
  const http: NodeHttpServer = createHttpServer((request, response) => {
    ready.then(() => handle(request, response)).catch((error: unknown) => {
      events('error', { message: (error as Error).message, method: request.method, path: pathOf(request) });
      if (!response.headersSent) sendError(response, 500, SERVER_ERROR, 'internal error');
      else response.destroy();
    });
  });
  let address: AddressInfo;
  try {
    address = await listen(http, host, options.port);
  } catch (error) {
    throw new StartupError(`cannot listen on ${hostPort(host, options.port)}: ${(error as Error).message}`);
  }
  if (oauth) {
    try {
      // The tools' scopes are offered as the tools are served now (a retry may add one later).
      const offeredScopes = oauth.toolScopes ? () => toolScopes(served.current.map((tool) => tool.definition.name)) : undefined;
      resourceServer = await createResourceServer({ ...oauth, resource: oauth.resource ?? `http://${hostPort(host, address.port)}${MCP_PATH}`, offeredScopes });
    } catch (error) {
      http.close();
      http.closeAllConnections();
      throw new StartupError(`OAuth: ${(error as Error).message}`);
    }
    authenticator = resourceServer;
    metadataPaths = [...new Set([...resourceMetadataPaths(resourceServer.resource), `${RESOURCE_METADATA_PATH}${MCP_PATH}`])];
  }
  policy = {
    hosts: hostsAllowed(host, address.port, options.allowHosts ?? [], options.token !== undefined || oauth !== undefined),
    origins: allowOrigins,
  };
  corsOrigins = new Set(policy.origins);
  started();
  const retries = retryLeftOut(leftOut, served, { ...options, log });

  let closing: Promise<void> | undefined;
  let endGrace: (() => void) | undefined;
  const close = (graceMs = DEFAULT_GRACE_MS): Promise<void> => {
    // Asked again while draining (a second Ctrl-C): no more grace.
    if (closing) {
      if (graceMs === 0) endGrace?.();
      return closing;
    }
    closing = (async () => {
      draining = true;
      retries.stop();
      for (const tool of served.current) tool.runner.close();
      events('draining', { running: limiter.running, queued: limiter.queued, graceMs });
      // net's close, not http's: http's also destroys every idle connection, and a connection
      // accepted whose request is not read yet counts as idle; its request, already sent, would
      // meet a reset (nginx answers 502 and does not resend a POST). Kept connections left
      // idle end at Node's keep-alive time-out, or with a 503 to their next request.
      const stopped = new Promise<void>((resolve) => NetServer.prototype.close.call(http, () => resolve()));
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<boolean>((resolve) => {
        endGrace = () => resolve(false);
        timer = setTimeout(endGrace, graceMs);
      });
      const finished = await Promise.race([allDone(exchanges).then(() => true), graceOver]);
      clearTimeout(timer);
      if (!finished) {
        events('grace_over', { running: limiter.running, queued: limiter.queued });
        for (const exchange of exchanges) exchange.close();
        // Aborted calls end once their processes are reaped.
        await Promise.race([limiter.idle(), new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
      }
      http.closeAllConnections();
      await stopped;
      events('stopped');
    })();
    return closing;
  };

  return { url: `http://${hostPort(host, address.port)}${MCP_PATH}`, address, limiter, close };
}

/**
 * Accepted Host values. A list given: those names (a NAME without a port also as itself, the
 * way a client writes the Host of a default port behind a proxy). Else with a token: any, since
 * a rebinding page cannot send the token. Else: this server's own names.
 */
function hostsAllowed(host: string, port: number, extra: readonly string[], hasToken: boolean): string[] | 'any' {
  if (extra.length === 0 && hasToken) return 'any';
  const bare = extra.filter((name) => !/:\d+$/.test(name) || name.endsWith(']')).map((name) => name.toLowerCase());
  return [...new Set([...hostsFor(host, port, extra), ...bare])];
}

const PREFLIGHT_HEADERS = {
  'access-control-allow-methods': 'POST',
  'access-control-allow-headers': 'authorization, dpop, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id',
  'access-control-max-age': '600',
};

function cors(response: ServerResponse, origin: string): void {
  response.setHeader('access-control-allow-origin', origin);
  response.setHeader('access-control-expose-headers', 'mcp-session-id, www-authenticate, dpop-nonce, retry-after');
  response.setHeader('vary', 'Origin');
}

/** How long a client waits before trying again after a 503 of the token check. */
const RETRY_AFTER_SECONDS = 5;

/** A JSON-RPC id: a string or a number; null when the request's cannot be told. */
type RpcId = string | number | null;

function sendError(response: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}, id: RpcId = null): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }));
}

/** The id of a JSON-RPC request, if it has a usable one. */
function rpcId(message: unknown): RpcId {
  const id = isRecord(message) ? message.id : undefined;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/**
 * The id of a request refused before its body was read, when the body is small and prompt
 * (PEEK_BODY_BYTES, PEEK_BODY_MS); else null, and the body is left unread.
 */
async function peekId(request: IncomingMessage): Promise<RpcId> {
  const declared = Number(request.headers['content-length']);
  if (request.method !== 'POST' || !(declared > 0 && declared <= PEEK_BODY_BYTES)) return null;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), PEEK_BODY_MS)));
  try {
    const body = await Promise.race([readBody(request, PEEK_BODY_BYTES), late]);
    return body === undefined ? null : rpcId(JSON.parse(body));
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** The scopes of per-tool access: `tools:*`, then one per tool whose name can be a scope. */
function toolScopes(names: readonly string[]): string[] {
  return [ALL_TOOLS_SCOPE, ...names.flatMap((name) => toolScope(name) ?? [])];
}

function pathOf(request: IncomingMessage): string {
  try {
    return new URL(request.url ?? '/', 'http://x').pathname;
  } catch {
    return '';
  }
}

/** The client's address; Node drops a request's socket once the request is destroyed. */
function remoteOf(request: IncomingMessage): string | undefined {
  return request.socket?.remoteAddress;
}

function methodOf(message: unknown): unknown {
  return isRecord(message) ? message.method : undefined;
}

/**
 * The catalog tool a message calls, if it is a tools/call: its name, or in browse mode the
 * search mode the name inside a twylt_call (twylt_list and twylt_search call no tool; they
 * show a caller its own tools).
 */
function calledTool(message: unknown, catalog: CatalogMode | undefined): string | undefined {
  if (methodOf(message) !== 'tools/call' || !isRecord(message) || !isRecord(message.params)) return undefined;
  const { name, arguments: args } = message.params;
  if (catalog !== 'browse' && catalog !== 'search') return typeof name === 'string' ? name : undefined;
  return name === CALL_TOOL && isRecord(args) && typeof args.name === 'string' ? args.name : undefined;
}

function idOf(message: unknown): unknown {
  return isRecord(message) && 'method' in message ? message.id : undefined;
}

/**
 * A request's identity for cancellation: the client's correlation id (handed out at
 * initialize, kept by no one) and its JSON-RPC id. Without the first, ids of different
 * clients collide, so a cancel then only works by closing the connection.
 */
function cancelKey(session: string | string[] | undefined, id: unknown): string {
  return `${String(session)}\n${JSON.stringify(id)}`;
}

/**
 * Exact numbers only where a tool reads them: in `params.arguments`. Elsewhere (the id,
 * `_meta`) the SDK's schemas want plain numbers, so a JsonNumber there is turned back into one.
 */
function exactArguments(message: unknown): unknown {
  if (Array.isArray(message)) return message.map(exactArguments);
  if (!isRecord(message) || !hasJsonNumber(message)) return message;
  const params = isRecord(message.params) ? message.params : undefined;
  const plain = JSON.parse(JSON.stringify(params ? { ...message, params: { ...params, arguments: undefined } } : message)) as Record<string, any>;
  if (params?.arguments !== undefined) plain.params.arguments = params.arguments;
  return plain;
}

function callFields(record: CallRecord, logInput: boolean): Record<string, unknown> {
  const { input, durationMs, queuedMs, tool, traceId, spanId, ...rest } = record;
  const round = (ms: number) => Math.round(ms * 10) / 10;
  // An unknown tool's name is the caller's text, of any length: cut, and its length said.
  const logged = tool.length > MAX_LOGGED_NAME_CHARS ? `${tool.slice(0, MAX_LOGGED_NAME_CHARS)}... (${tool.length} characters)` : tool;
  // The names OpenTelemetry's log data model gives them, so a log backend links line and trace.
  const trace = traceId === undefined ? {} : { trace_id: traceId, span_id: spanId };
  return { tool: logged, ...rest, durationMs: round(durationMs), queuedMs: round(queuedMs), ...trace, ...(logInput ? { input } : {}) };
}

/** Who called, in a log line: the token's `sub` and `client_id`, when it names them. */
function callerFields(caller: Caller): Record<string, string> {
  return { ...(caller.sub !== undefined && { sub: caller.sub }), ...(caller.clientId !== undefined && { client_id: caller.clientId }) };
}

/**
 * A refusal's reason as a metric label: the OAuth `error=` of its challenge (`invalid_token`,
 * `insufficient_scope`), else a name for its status. Never the free-text reason, which may
 * quote what a caller sent.
 */
function refusalReason(status: number, challenge: string | undefined): string {
  const error = challenge === undefined ? undefined : /\berror="([a-z_]{1,40})"/.exec(challenge)?.[1];
  if (error !== undefined) return error;
  return STATUS_REASONS[status] ?? 'other';
}

const STATUS_REASONS: Record<number, string> = {
  400: 'bad_request',
  401: 'missing_token',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'body_too_large',
  503: 'shutting_down',
};

/** Resolves once the set of exchanges is empty. */
async function allDone(exchanges: ReadonlySet<Exchange>): Promise<void> {
  while (exchanges.size > 0) await new Promise((resolve) => setTimeout(resolve, 20));
}
