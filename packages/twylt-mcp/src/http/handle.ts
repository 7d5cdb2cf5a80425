/**
 * One request: through the gates (gates.ts), then to a fresh SDK Server and transport over
 * the tools served at that moment (stateless: any replica can answer any request).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { mayCallTool, type Caller } from 'twylt/server';
import { refusalChannel, type RefusalMessage } from 'twylt/toolset';
import { openExchange } from '../exchange.js';
import { createServer } from '../server.js';
import { GATES, type Arriving, type Gateway, type Stop } from './gates.js';
import { SERVER_ERROR, cancelKey, idOf, methodOf, sendError } from './json-rpc.js';
import { callFields, callerFields, pathOf, refusalReason, remoteOf } from './log-fields.js';

/** The header that carries the correlation id a client gets at initialize (see cancelKey). */
const SESSION_HEADER = 'mcp-session-id';

/** How long a client waits before trying again after a 503 of the token check. */
const RETRY_AFTER_SECONDS = 5;

export async function handle(gateway: Gateway, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const arriving: Arriving = { request, response, path: pathOf(request) };
  for (const gate of GATES) {
    const stop = await gate(gateway, arriving);
    if (stop) return end(gateway, arriving, stop);
  }
  await serveMcp(gateway, arriving, arriving.caller!, arriving.message);
}

/** A gate's Stop carried out: a refusal or a denial logged, counted and answered. */
function end({ events }: Gateway, { request, response, path }: Arriving, stop: Stop): void {
  if ('answered' in stop) return;
  const where = { method: request.method, path, remote: remoteOf(request) };
  if ('refuse' in stop) {
    const { status, code, reason, headers = {} } = stop.refuse;
    events('refused', { status, reason, ...where });
    if (refusalChannel.hasSubscribers) refusalChannel.publish({ status, reason: refusalReason(status, headers['www-authenticate']) } satisfies RefusalMessage);
    sendError(response, status, code, reason, headers);
    return;
  }
  const { status, kind, reason, detail } = stop.deny;
  events('refused', { status, kind, reason, ...(detail !== undefined && { detail }), ...where, ...callerFields(stop.caller ?? {}) });
  if (refusalChannel.hasSubscribers) refusalChannel.publish({ status, reason: kind } satisfies RefusalMessage);
  // A 503 is the server's fault: the client's token may be good, so no challenge to sign in again.
  const headers: Record<string, string> = {
    ...(stop.deny.challenge === undefined ? { 'retry-after': String(RETRY_AFTER_SECONDS) } : { 'www-authenticate': stop.deny.challenge }),
    ...stop.deny.headers,
  };
  sendError(response, status, SERVER_ERROR, reason, headers, stop.id);
}

/** The request past every gate: cancels delivered, then answered by its own SDK Server. */
async function serveMcp(gateway: Gateway, { request, response }: Arriving, caller: Caller, message: unknown): Promise<void> {
  const { cancellable, drainer, events } = gateway;
  const messages = Array.isArray(message) ? message : [message];
  const session = request.headers[SESSION_HEADER];
  for (const cancel of messages.filter((m) => methodOf(m) === 'notifications/cancelled')) {
    const { requestId, reason } = (cancel as { params?: { requestId?: unknown; reason?: unknown } }).params ?? {};
    cancellable.get(cancelKey(session, requestId))?.cancel(requestId, reason);
  }
  // The correlation id that lets a later cancel find this client's calls; nothing keeps it.
  if (messages.some((m) => methodOf(m) === 'initialize')) response.setHeader(SESSION_HEADER, randomUUID());

  const server: Server = createServer(gateway.served.current, {
    log: (text) => events('mcp', { message: text }),
    limiter: gateway.limiter,
    onCall: (record) => events('call', { ...callFields(record, gateway.logInput), ...callerFields(caller) }),
    mayCall: gateway.toolScopes ? (name: string) => mayCallTool(caller, name) : undefined,
    catalog: gateway.catalog,
    search: gateway.search,
    transport: { kind: 'http', client: { address: remoteOf(request), port: request.socket?.remotePort } },
  });
  const sdkTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  const ids = messages.flatMap((m) => (idOf(m) === undefined ? [] : [idOf(m)]));
  const exchange = openExchange(server, sdkTransport, ids);
  const keys = typeof session === 'string' ? ids.map((id) => cancelKey(session, id)) : [];
  drainer.add(exchange);
  for (const key of keys) cancellable.set(key, exchange);
  // The answer is sent, or the client went away: either way this exchange is over, and
  // closing it aborts a call still running, which kills the tool's process group.
  response.once('close', () => {
    drainer.delete(exchange);
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
