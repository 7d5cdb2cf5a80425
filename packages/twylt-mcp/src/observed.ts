/**
 * What the bridge tells observers of one MCP request (ADR 0033): the message published on
 * twylt/toolset's request channel, built only when someone listens.
 */
import { isRecord, requestChannel, type RequestMessage, type TraceCarrier } from 'twylt/toolset';

/** Where a request came from, as the bridge knows it (HTTP: the client's socket). */
export interface Transport {
  kind: 'stdio' | 'http';
  client?: { address?: string; port?: number };
}

/** Anyone listening to requests? */
export function observingRequests(): boolean {
  return requestChannel.start.hasSubscribers || requestChannel.asyncEnd.hasSubscribers;
}

type Headers = Record<string, string | string[] | undefined>;

/** The message for one request; `tool` only when the served catalog has it. */
export function requestMessage(method: string, params: unknown, id: unknown, headers: Headers | undefined, transport: Transport, tool: string | undefined): RequestMessage {
  const meta = isRecord(params) && isRecord(params._meta) ? params._meta : undefined;
  return {
    method,
    tool,
    requestId: typeof id === 'string' || typeof id === 'number' ? id : undefined,
    sessionId: header(headers, 'mcp-session-id'),
    protocolVersion: header(headers, 'mcp-protocol-version'),
    transport: transport.kind,
    client: transport.client,
    // MCP carries the context in params._meta; a plain HTTP client or proxy may have sent headers.
    carrier: carrierOf(meta) ?? carrierOf({ traceparent: header(headers, 'traceparent'), tracestate: header(headers, 'tracestate') }) ?? {},
  };
}

function carrierOf(source: Record<string, unknown> | undefined): TraceCarrier | undefined {
  if (typeof source?.traceparent !== 'string') return undefined;
  return { traceparent: source.traceparent, ...(typeof source.tracestate === 'string' ? { tracestate: source.tracestate } : {}) };
}

function header(headers: Headers | undefined, name: string): string | undefined {
  const value = headers?.[name];
  return typeof value === 'string' ? value : undefined;
}
