/**
 * The checks every request meets before the SDK sees it, in order, as hono composes
 * middleware: each gate looks at the request (and what the gates before it found) and
 * returns a Stop, which ends the request, or nothing, and the next gate runs. The order is
 * the rule: nothing is read before the caller is known, nothing parsed before it is read.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import {
  ALL_TOOLS_SCOPE,
  BodyTooLargeError,
  checkAccess,
  mayCallTool,
  parseBoundedJson,
  readBody,
  toolScope,
  type AccessPolicy,
  type Authenticator,
  type Caller,
  type Denial,
  type ResourceServer,
} from 'twylt/server';
import type { CallLimiter } from 'twylt/toolset';
import type { CatalogMode } from '../catalog-mode.js';
import type { Exchange } from '../exchange.js';
import { invalidParamsAnswer } from '../invalid-params.js';
import type { EventLog } from '../log.js';
import { BUSY_ERROR_CODE } from '../server.js';
import type { ServedTools } from '../retry.js';
import type { CatalogSearch } from '../search.js';
import type { Drainer } from './drain.js';
import { INVALID_REQUEST, PARSE_ERROR, SERVER_ERROR, calledTool, exactArguments, peekId, rpcId, sendError, type RpcId } from './json-rpc.js';
import { remoteOf } from './log-fields.js';
import { HEALTH_PATH, MCP_PATH } from './options.js';

/** What every request is answered with: fixed before the first one is (OAuth's set-up included). */
export interface Gateway {
  readonly served: ServedTools;
  readonly search?: CatalogSearch;
  readonly limiter: CallLimiter;
  readonly catalog?: CatalogMode;
  readonly events: EventLog;
  readonly logInput: boolean;
  readonly maxBodyBytes: number;
  readonly policy: AccessPolicy;
  /** The allowed origins, which get CORS headers. */
  readonly corsOrigins: ReadonlySet<string>;
  /** A shared token's, or OAuth's (the resource server), or anyone's. */
  readonly authenticator: Authenticator;
  /** With OAuth: the resource server, and the paths of its metadata. */
  readonly resourceServer?: ResourceServer;
  readonly metadataPaths: readonly string[];
  /** A tool needs its scope (`--auth-tool-scopes`). */
  readonly toolScopes: boolean;
  readonly drainer: Drainer;
  /** Connections that have carried a request: only those can be a client's keep-alive reuse. */
  readonly used: WeakSet<Socket>;
  /** Requests in progress by `cancelKey`, for `notifications/cancelled`. */
  readonly cancellable: Map<string, Exchange>;
  /** Whether a tool of this name is served now. */
  isServed(name: string): boolean;
}

/** One request on its way through the gates; each fills in what it found. */
export interface Arriving {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly path: string;
  /** Set by `authentication`. */
  caller?: Caller;
  /** Set by `parse`: the JSON-RPC message, or batch, its numbers exact in `arguments`. */
  message?: unknown;
  body?: string;
}

/**
 * How a gate ends a request: refused (logged, counted, answered with a JSON-RPC error),
 * denied for its credential (the same, with the caller and a challenge), or already answered
 * by the gate (health, metadata, a preflight, a GET's quiet 405).
 */
export type Stop =
  | { refuse: { status: number; code: number; reason: string; headers?: Record<string, string> } }
  | { deny: Denial; caller?: Caller; id: RpcId }
  | { answered: true };

export type Gate = (gateway: Gateway, arriving: Arriving) => Stop | undefined | Promise<Stop | undefined>;

const ANSWERED: Stop = { answered: true };
const refuse = (status: number, code: number, reason: string, headers?: Record<string, string>): Stop => ({ refuse: { status, code, reason, headers } });

/** GET or HEAD /healthz: the bridge's state and load, without any credential. */
const health: Gate = (gateway, { request, response, path }) => {
  if (path !== HEALTH_PATH) return undefined;
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    sendError(response, 405, SERVER_ERROR, `${request.method} is not served at ${HEALTH_PATH}`, { allow: 'GET, HEAD' });
    return ANSWERED;
  }
  const { draining } = gateway.drainer;
  response.writeHead(draining ? 503 : 200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(JSON.stringify({ status: draining ? 'draining' : 'ok', running: gateway.limiter.running, queued: gateway.limiter.queued }));
  return ANSWERED;
};

/**
 * While draining, a connection's first request was sent before the port closed (a proxy
 * opens one per request): it is served. A kept connection's next request is refused.
 */
const draining: Gate = ({ drainer, used }, { request }) => {
  const reused = used.has(request.socket);
  used.add(request.socket);
  if (drainer.draining && reused) return refuse(503, BUSY_ERROR_CODE, 'twylt-mcp is shutting down; the request was not run, retry', { connection: 'close' });
  return undefined;
};

/** Public, for any page and any client: how to get a token for this server. */
const metadata: Gate = ({ resourceServer, metadataPaths }, { request, response, path }) => {
  if (!resourceServer || !metadataPaths.includes(path)) return undefined;
  // Any page may read it (the MCP Inspector's does): public, and no credential is involved.
  response.setHeader('access-control-allow-origin', '*');
  if (request.method === 'OPTIONS') {
    response.writeHead(204, { 'access-control-allow-methods': 'GET', 'access-control-allow-headers': 'mcp-protocol-version', 'access-control-max-age': '600' }).end();
  } else if (request.method !== 'GET' && request.method !== 'HEAD') {
    sendError(response, 405, SERVER_ERROR, `${request.method} is not served at ${path}`, { allow: 'GET, HEAD' });
  } else {
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
    response.end(JSON.stringify(resourceServer.metadata()));
  }
  return ANSWERED;
};

const PREFLIGHT_HEADERS = {
  'access-control-allow-methods': 'POST',
  'access-control-allow-headers': 'authorization, dpop, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id',
  'access-control-max-age': '600',
};

/** An allowed origin's CORS headers, on every answer; a preflight answered (it carries no token: only its Host and Origin can be checked). */
const cors: Gate = ({ corsOrigins, policy }, { request, response }) => {
  const origin = request.headers.origin?.toLowerCase();
  if (origin !== undefined && corsOrigins.has(origin)) {
    response.setHeader('access-control-allow-origin', origin);
    response.setHeader('access-control-expose-headers', 'mcp-session-id, www-authenticate, dpop-nonce, retry-after');
    response.setHeader('vary', 'Origin');
  }
  if (request.method !== 'OPTIONS') return undefined;
  const refusal = checkAccess(request, { ...policy, token: undefined });
  if (refusal || origin === undefined) return refuse(refusal?.status ?? 403, SERVER_ERROR, refusal?.reason ?? 'a preflight needs an Origin');
  response.writeHead(204, PREFLIGHT_HEADERS).end();
  return ANSWERED;
};

/** Host and Origin (twylt/server's rules against DNS rebinding and foreign pages). */
const access: Gate = ({ policy }, { request }) => {
  const refusal = checkAccess(request, policy);
  return refusal ? refuse(refusal.status, SERVER_ERROR, refusal.reason) : undefined;
};

/** The credential: a shared token or an OAuth access token. A denial answers the request's id when it can be read cheaply. */
const authentication: Gate = async ({ authenticator }, arriving) => {
  const { caller, denial } = await authenticator.authenticate(arriving.request);
  if (denial) return { deny: denial, caller, id: arriving.path === MCP_PATH ? await peekId(arriving.request) : null };
  arriving.caller = caller;
  return undefined;
};

const route: Gate = (_gateway, { path }) => (path === MCP_PATH ? undefined : refuse(404, SERVER_ERROR, `nothing at ${path}; MCP is served at ${MCP_PATH}`));

/**
 * Stateless: there is no session stream to GET and no session to DELETE. MCP clients try
 * the GET after initializing and take 405 as the answer, so it is not logged.
 */
const method: Gate = (_gateway, { request, response }) => {
  if (request.method === 'POST') return undefined;
  const reason = `${request.method} is not served: send JSON-RPC messages with POST`;
  if (request.method !== 'GET') return refuse(405, SERVER_ERROR, reason, { allow: 'POST' });
  sendError(response, 405, SERVER_ERROR, reason, { allow: 'POST' });
  return ANSWERED;
};

const body: Gate = async ({ maxBodyBytes }, arriving) => {
  try {
    arriving.body = await readBody(arriving.request, maxBodyBytes);
  } catch (error) {
    if (!(error instanceof BodyTooLargeError)) throw error;
    return refuse(413, INVALID_REQUEST, error.message, { connection: 'close' });
  }
  return undefined;
};

/** A caller's numbers reach the tool as written (2^53 and beyond, 1.0), ADR 0009. */
const parse: Gate = (_gateway, arriving) => {
  try {
    arriving.message = exactArguments(parseBoundedJson(arriving.body!));
  } catch (error) {
    return refuse(400, PARSE_ERROR, `Parse error: ${(error as Error).message}`);
  }
  return undefined;
};

/** Gone while its body was read: nothing to answer, and no 'close' is coming to clean up. */
const gone: Gate = (_gateway, { request }) => (request.socket?.destroyed !== false ? ANSWERED : undefined);

/**
 * A request sound but for its params (`"_meta": 5`): answered here with -32602 under its id,
 * as over stdio, where the SDK would refuse the whole body as unparsable (-32700).
 */
const parameters: Gate = ({ events }, { request, response, path, message }) => {
  const invalid = Array.isArray(message) ? undefined : invalidParamsAnswer(message);
  if (!invalid) return undefined;
  events('refused', { status: 200, reason: invalid.error.message, method: request.method, path, remote: remoteOf(request) });
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(invalid));
  return ANSWERED;
};

/**
 * A tool the caller may not call is refused before anything runs, so that a client can ask
 * for the scope (MCP's step-up authorization) and call again. Only a tool of the catalog is
 * named back: any other name is unknown, and answered so by the server.
 */
const scope: Gate = (gateway, { caller, message }) => {
  const { resourceServer } = gateway;
  if (!resourceServer || !gateway.toolScopes) return undefined;
  const messages = Array.isArray(message) ? message : [message];
  const forbidden = messages.map((m) => calledTool(m, gateway.catalog)).find((name) => name !== undefined && gateway.isServed(name) && !mayCallTool(caller!, name));
  if (forbidden === undefined) return undefined;
  const denial = resourceServer.insufficientScope(caller!, [toolScope(forbidden) ?? ALL_TOOLS_SCOPE], `the token grants no access to the tool ${JSON.stringify(forbidden)}`);
  return { deny: denial, caller, id: Array.isArray(message) ? null : rpcId(message) };
};

/** Every gate, in the order a request meets them. */
export const GATES: readonly Gate[] = [health, draining, metadata, cors, access, authentication, route, method, body, parse, gone, parameters, scope];
