/** The fields of the HTTP bridge's log lines and refusal events (docs/mcp.md lists them). */
import type { IncomingMessage } from 'node:http';
import type { Caller } from 'twylt/server';
import type { CallRecord } from '../outcome.js';

/** The longest tool name a log line carries whole; a name nobody serves can be any length. */
const MAX_LOGGED_NAME_CHARS = 200;

export function pathOf(request: IncomingMessage): string {
  try {
    return new URL(request.url ?? '/', 'http://x').pathname;
  } catch {
    return '';
  }
}

/** The client's address; Node drops a request's socket once the request is destroyed. */
export function remoteOf(request: IncomingMessage): string | undefined {
  return request.socket?.remoteAddress;
}

export function callFields(record: CallRecord, logInput: boolean): Record<string, unknown> {
  const { input, durationMs, queuedMs, tool, traceId, spanId, ...rest } = record;
  const round = (ms: number) => Math.round(ms * 10) / 10;
  // An unknown tool's name is the caller's text, of any length: cut, and its length said.
  const logged = tool.length > MAX_LOGGED_NAME_CHARS ? `${tool.slice(0, MAX_LOGGED_NAME_CHARS)}... (${tool.length} characters)` : tool;
  // The names OpenTelemetry's log data model gives them, so a log backend links line and trace.
  const trace = traceId === undefined ? {} : { trace_id: traceId, span_id: spanId };
  return { tool: logged, ...rest, durationMs: round(durationMs), queuedMs: round(queuedMs), ...trace, ...(logInput ? { input } : {}) };
}

/** Who called, in a log line: the token's `sub` and `client_id`, when it names them. */
export function callerFields(caller: Caller): Record<string, string> {
  return { ...(caller.sub !== undefined && { sub: caller.sub }), ...(caller.clientId !== undefined && { client_id: caller.clientId }) };
}

/**
 * A refusal's reason as a metric label: the OAuth `error=` of its challenge (`invalid_token`,
 * `insufficient_scope`), else a name for its status. Never the free-text reason, which may
 * quote what a caller sent.
 */
export function refusalReason(status: number, challenge: string | undefined): string {
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
