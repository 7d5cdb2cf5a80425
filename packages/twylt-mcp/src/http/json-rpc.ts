/** JSON-RPC as the HTTP layer reads and answers it, before and around the SDK. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { hasJsonNumber } from 'twylt/client';
import { readBody } from 'twylt/server';
import { isRecord } from 'twylt/toolset';
import { CALL_TOOL } from '../catalog.js';
import type { CatalogMode } from '../catalog-mode.js';

/** JSON-RPC codes of the errors the HTTP layer answers before the SDK sees a request. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const SERVER_ERROR = -32000;

/**
 * A request refused before its body was read (no token, a bad one) has its JSON-RPC id
 * looked up in a body this small at most, declared by Content-Length and arriving within
 * PEEK_BODY_MS; a larger or slower one is answered with `"id": null` unread.
 */
const PEEK_BODY_BYTES = 64 * 1024;
const PEEK_BODY_MS = 2000;

/** A JSON-RPC id: a string or a number; null when the request's cannot be told. */
export type RpcId = string | number | null;

export function sendError(response: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}, id: RpcId = null): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }));
}

/** The id of a JSON-RPC request, if it has a usable one. */
export function rpcId(message: unknown): RpcId {
  const id = isRecord(message) ? message.id : undefined;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/**
 * The id of a request refused before its body was read, when the body is small and prompt
 * (PEEK_BODY_BYTES, PEEK_BODY_MS); else null, and the body is left unread.
 */
export async function peekId(request: IncomingMessage): Promise<RpcId> {
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

export function methodOf(message: unknown): unknown {
  return isRecord(message) ? message.method : undefined;
}

/** The id of a request (a message with a method); undefined for a notification or a response. */
export function idOf(message: unknown): unknown {
  return isRecord(message) && 'method' in message ? message.id : undefined;
}

/**
 * The catalog tool a message calls, if it is a tools/call: its name, or in browse mode the
 * search mode the name inside a twylt_call (twylt_list and twylt_search call no tool; they
 * show a caller its own tools).
 */
export function calledTool(message: unknown, catalog: CatalogMode | undefined): string | undefined {
  if (methodOf(message) !== 'tools/call' || !isRecord(message) || !isRecord(message.params)) return undefined;
  const { name, arguments: args } = message.params;
  if (catalog !== 'browse' && catalog !== 'search') return typeof name === 'string' ? name : undefined;
  return name === CALL_TOOL && isRecord(args) && typeof args.name === 'string' ? args.name : undefined;
}

/**
 * A request's identity for cancellation: the client's correlation id (handed out at
 * initialize, kept by no one) and its JSON-RPC id. Without the first, ids of different
 * clients collide, so a cancel then only works by closing the connection.
 */
export function cancelKey(session: string | string[] | undefined, id: unknown): string {
  return `${String(session)}\n${JSON.stringify(id)}`;
}

/**
 * Exact numbers only where a tool reads them: in `params.arguments`. Elsewhere (the id,
 * `_meta`) the SDK's schemas want plain numbers, so a JsonNumber there is turned back into one.
 */
export function exactArguments(message: unknown): unknown {
  if (Array.isArray(message)) return message.map(exactArguments);
  if (!isRecord(message) || !hasJsonNumber(message)) return message;
  const params = isRecord(message.params) ? message.params : undefined;
  const plain = JSON.parse(JSON.stringify(params ? { ...message, params: { ...params, arguments: undefined } } : message)) as Record<string, any>;
  if (params?.arguments !== undefined) plain.params.arguments = params.arguments;
  return plain;
}
