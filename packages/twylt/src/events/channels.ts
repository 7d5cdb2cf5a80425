/**
 * What the core tells an observer (ADR 0033): the `node:diagnostics_channel` channels that
 * calls, queues, warm pools, tool processes and the sandbox publish on, and the shape of each
 * message. Below the client and the toolset, which both publish here (ADR 0041); Node-only,
 * so the tool runtime never imports it.
 * The core depends on nothing else for observability: twylt/observe (metrics, spans) or any
 * other subscriber listens here. A publisher first checks `hasSubscribers`, so an unobserved
 * consumer builds no message at all.
 *
 * A subscriber may write to a message only where its type says so (`env`, `traceId`,
 * `spanId`); everything else is read-only.
 */
import type { ChildProcess } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';

/** Channel names; stable, documented in docs/observability.md. */
export const CHANNEL = {
  /** Tracing channel around one MCP request (twylt-mcp): RequestMessage. */
  request: 'twylt:mcp:request',
  /** Tracing channel around one ToolRunner.call (every consumer): CallMessage. */
  call: 'twylt:call',
  /** Tracing channel around one check of a tool's output against its outputSchema: ValidateMessage. */
  validate: 'twylt:validate',
  /** A call meets the limiter: QueueMessage. */
  queue: 'twylt:queue',
  /** A call asks a warm pool for a process: WarmMessage. */
  warm: 'twylt:warm',
  /** A tool process is about to start (`env` may still change): ProcessMessage. */
  spawn: 'twylt:process:spawn',
  /** It started (`child` set), or could not (`child` unset): ProcessMessage. */
  spawned: 'twylt:process:spawned',
  /** A request refused before MCP (authentication, scopes): RefusalMessage. */
  refusal: 'twylt:http:refusal',
  /** Published by the sandbox when it stops a tool: SandboxRefusalMessage. */
  sandboxRefusal: 'twylt:sandbox:refusal',
  /** Tracing channel around one tool search (twylt/search): SearchMessage. */
  search: 'twylt:search',
} as const;

/** W3C trace context as a caller sent it (params._meta or HTTP headers). */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

export interface RequestMessage {
  /** `tools/call`, `tools/list`... */
  method: string;
  /** The tool, only when the served catalog has it (never a caller's free text). */
  tool?: string;
  requestId?: string | number;
  /** The Mcp-Session-Id the client sent (HTTP). */
  sessionId?: string;
  transport: 'stdio' | 'http';
  protocolVersion?: string;
  client?: { address?: string; port?: number };
  /** The caller's trace context: params._meta first, else the HTTP headers. */
  carrier: TraceCarrier;
  /** Set by the publisher before the end: a FailureKind, or a JSON-RPC error code as text. */
  errorType?: string;
  /** Set by a tracing subscriber at start: the request's span, for the log line. */
  traceId?: string;
  spanId?: string;
}

export interface CallMessage {
  /** The entry's name (catalog names only: an entry is configured, never sent by a caller). */
  tool: string;
  /** Set by the channel: what the call resolved with, or threw. */
  result?: unknown;
  error?: unknown;
}

export interface ValidateMessage {
  side: 'input' | 'output';
  result?: unknown;
  error?: unknown;
}

export interface QueueMessage {
  /** `wait`: queued; `start`: a queued call got its slot; `leave`: it left (cancelled); `refuse`: the queue was full. */
  kind: 'wait' | 'start' | 'leave' | 'refuse';
  /** The same object from `wait` to its `start` or `leave`. */
  ticket: object;
  running: number;
  queued: number;
}

export interface WarmMessage {
  hit: boolean;
  /** The process taken, on a hit. */
  child?: ChildProcess;
}

export interface ProcessMessage {
  command: readonly string[];
  /** The whole environment of the tool; a subscriber to `spawn` may replace it (TRACEPARENT). */
  env: NodeJS.ProcessEnv;
  /** Started ahead of any call (warm pool): belongs to no call yet. */
  warm: boolean;
  child?: ChildProcess;
}

export interface RefusalMessage {
  status: number;
  /** A short stable name (`invalid_token`, `insufficient_scope`, `host`...), never free text. */
  reason: string;
}

export interface SandboxRefusalMessage {
  reason: 'memory' | 'processes' | 'cpu_time' | 'network';
  tool?: string;
  /** The host a `network` refusal refused. */
  host?: string;
}

export interface SearchMessage {
  /** `lexical`, or `hybrid` (lexical and embeddings, fused); a fallback's ranking is `lexical`. */
  ranking: 'lexical' | 'hybrid';
  /** Set by the publisher before the end: the tools found. */
  results?: number;
  /**
   * Set when embeddings were asked for and lexical results were given instead: `timeout`,
   * `error` (the endpoint failed or answered nonsense), or `pending` (tool vectors not ready).
   */
  fallback?: 'timeout' | 'error' | 'pending';
}

export const requestChannel = diagnostics.tracingChannel<unknown, RequestMessage>(CHANNEL.request);
export const callChannel = diagnostics.tracingChannel<unknown, CallMessage>(CHANNEL.call);
export const validateChannel = diagnostics.tracingChannel<unknown, ValidateMessage>(CHANNEL.validate);
export const queueChannel = diagnostics.channel(CHANNEL.queue);
export const warmChannel = diagnostics.channel(CHANNEL.warm);
export const spawnChannel = diagnostics.channel(CHANNEL.spawn);
export const spawnedChannel = diagnostics.channel(CHANNEL.spawned);
export const refusalChannel = diagnostics.channel(CHANNEL.refusal);
export const sandboxRefusalChannel = diagnostics.channel(CHANNEL.sandboxRefusal);
export const searchChannel = diagnostics.tracingChannel<unknown, SearchMessage>(CHANNEL.search);

/** A span's identity, as OpenTelemetry's SpanContext has it. */
export interface SpanIds {
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState?: { serialize(): string };
}

/**
 * The environment that hands a tool process its span (TRACEPARENT, TRACESTATE: the W3C trace
 * context as OpenTelemetry's environment-carrier convention names it).
 */
export function traceEnv(context: SpanIds): Record<string, string> {
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0');
  const env: Record<string, string> = { TRACEPARENT: `00-${context.traceId}-${context.spanId}-${flags}` };
  const state = context.traceState?.serialize();
  if (state) env.TRACESTATE = state;
  return env;
}

/**
 * Run `task` inside the tracing channel's events when anyone listens, else just run it.
 * (TracingChannel.hasSubscribers is newer than some runtimes we support: check its channels.)
 */
export function traced<T, M extends object>(channel: diagnostics.TracingChannel<unknown, M>, message: () => M, task: () => Promise<T>): Promise<T> {
  if (!observed(channel)) return task();
  return channel.tracePromise(task, message());
}

function observed(channel: diagnostics.TracingChannel<unknown, any>): boolean {
  return channel.start.hasSubscribers || channel.asyncEnd.hasSubscribers || channel.error.hasSubscribers;
}
