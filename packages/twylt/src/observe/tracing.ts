/**
 * Spans per the OpenTelemetry MCP conventions (ADR 0033), made from the core's channels with
 * the official OpenTelemetry SDK, loaded only here and only when the standard OTEL_*
 * environment asks for traces. A SERVER span per MCP request, continuing the caller's trace
 * (params._meta, else the HTTP headers); under it the queue, the warm take or cold start,
 * the tool process, and each schema check. A cold tool process gets TRACEPARENT/TRACESTATE
 * naming its own span.
 *
 * It keeps no global OpenTelemetry state (no global provider, context manager or propagator),
 * so an application that embeds a consumer keeps its own.
 */
import type { ChildProcess } from 'node:child_process';
import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import {
  queueChannel,
  requestChannel,
  searchChannel,
  spawnChannel,
  spawnedChannel,
  traceEnv,
  validateChannel,
  warmChannel,
  type ProcessMessage,
  type QueueMessage,
  type RequestMessage,
  type SearchMessage,
  type ValidateMessage,
  type WarmMessage,
} from '../events/channels.js';
import { ATTRIBUTE } from './names.js';
import { bindScopes, currentScope, toolOf, type Scope } from './scope.js';
import type { TraceSettings } from './settings.js';
import { Subscriptions } from './subscriptions.js';

/**
 * The longest string attribute value a span keeps, in characters (docs/observability.md): a
 * client chooses some values (its JSON-RPC id, the Mcp-Session-Id it sends), and spans wait in
 * the export queue while a collector is slow, so none may hold megabytes. The SDK cuts every
 * longer value to this length when it is set: one limit for every attribute of every span.
 */
export const MAX_ATTRIBUTE_LENGTH = 256;

export interface Tracing {
  /** Send what is buffered and stop. */
  shutdown(): Promise<void>;
}

/** Load the SDK and subscribe. Throws (an Error that says why) when the SDK cannot be loaded. */
export async function startTracing(settings: TraceSettings, serviceName: string): Promise<Tracing> {
  const [api, core, resources, sdk, exporterModule] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace'),
    settings.protocol === 'http/json' ? import('@opentelemetry/exporter-trace-otlp-http') : import('@opentelemetry/exporter-trace-otlp-proto'),
  ]);
  const { SpanKind, SpanStatusCode, ROOT_CONTEXT, trace, defaultTextMapGetter } = api;
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the consumer's own name.
  const resource = resources.resourceFromAttributes({ [ATTRIBUTE.serviceName]: serviceName }).merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const processor = new sdk.BatchSpanProcessor({
    exporter: new exporterModule.OTLPTraceExporter(),
    scheduledDelayMillis: settings.scheduleDelayMs,
    exportTimeoutMillis: settings.exportTimeoutMs,
  });
  const provider = new sdk.TracerProvider({
    resource,
    sampler: sampler(sdk, settings),
    spanProcessors: [processor],
    spanLimits: { attributeValueLengthLimit: MAX_ATTRIBUTE_LENGTH },
  });
  const tracer: Tracer = provider.getTracer('twylt');
  const propagator = new core.W3CTraceContextPropagator();

  const parentOf = (scope: Scope | undefined): Context | undefined => (scope?.span ? trace.setSpan(ROOT_CONTEXT, scope.span as Span) : undefined);
  const child = (name: string, attributes: Attributes, scope = currentScope()): Span | undefined => {
    const parent = parentOf(scope);
    return parent ? tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent) : undefined;
  };
  const fail = (span: Span, errorType: string) => {
    span.setAttribute(ATTRIBUTE.errorType, errorType);
    span.setStatus({ code: SpanStatusCode.ERROR });
  };

  const unbindScopes = bindScopes();
  const subscriptions = new Subscriptions();
  const spanOfRequest = new WeakMap<RequestMessage, Span>();

  subscriptions.on(requestChannel.start, (data) => {
    const message = data as RequestMessage;
    const scope = currentScope();
    if (!scope) return;
    const parent = propagator.extract(ROOT_CONTEXT, message.carrier, defaultTextMapGetter);
    const span = tracer.startSpan(message.method, { kind: SpanKind.SERVER, attributes: requestAttributes(message) }, parent);
    scope.span = span;
    spanOfRequest.set(message, span);
    const context = span.spanContext();
    message.traceId = context.traceId;
    message.spanId = context.spanId;
  });
  subscriptions.on(requestChannel.asyncEnd, (data) => {
    const message = data as RequestMessage;
    const span = spanOfRequest.get(message);
    if (!span) return;
    if (message.tool !== undefined) {
      span.updateName(`${message.method} ${message.tool}`);
      span.setAttribute(ATTRIBUTE.toolName, message.tool);
    }
    if (message.errorType !== undefined) {
      fail(span, message.errorType);
      // A JSON-RPC error (not a tool's failure, which is a result) carries its code.
      if (/^-?\d+$/.test(message.errorType)) span.setAttribute(ATTRIBUTE.statusCode, message.errorType);
    }
    span.end();
  });

  const queued = new WeakMap<object, Span>();
  subscriptions.on(queueChannel, (data) => {
    const message = data as QueueMessage;
    if (message.kind === 'wait') {
      const span = child('queue', { [ATTRIBUTE.queueWaiting]: message.queued, [ATTRIBUTE.queueRunning]: message.running });
      if (span) queued.set(message.ticket, span);
      return;
    }
    if (message.kind === 'refuse') {
      const span = child('queue', { [ATTRIBUTE.queueWaiting]: message.queued, [ATTRIBUTE.queueRunning]: message.running });
      if (span) {
        fail(span, 'queue_full');
        span.end();
      }
      return;
    }
    const span = queued.get(message.ticket);
    if (!span) return;
    if (message.kind === 'leave') fail(span, 'cancelled');
    span.end();
  });

  subscriptions.on(warmChannel, (data) => {
    const message = data as WarmMessage;
    const scope = currentScope();
    const tool = toolOf(scope);
    const take = child('warm take', { [ATTRIBUTE.warmHit]: message.hit, ...(tool ? { [ATTRIBUTE.toolName]: tool } : {}) }, scope);
    take?.end();
    // A warm process was started before this call: it has no TRACEPARENT (ADR 0033); its span
    // here covers it from the moment it got the input.
    if (message.child) processSpan(message.child, scope, 'warm');
  });

  subscriptions.on(spawnChannel, (data) => {
    const message = data as ProcessMessage;
    const scope = currentScope();
    if (message.warm || !scope?.span) return;
    const start = child('cold start', toolAttributes(scope), scope);
    const span = processSpan(undefined, scope, 'cold');
    if (!start || !span) return;
    launching.set(message, { start, span });
    const context = span.spanContext();
    message.env = { ...message.env, ...traceEnv(context) };
  });
  const launching = new WeakMap<ProcessMessage, { start: Span; span: Span }>();
  subscriptions.on(spawnedChannel, (data) => {
    const message = data as ProcessMessage;
    const launch = launching.get(message);
    if (!launch) return;
    const processChild = message.child;
    if (!processChild) {
      fail(launch.start, 'spawn_failed');
      launch.start.end();
      launch.span.end();
      return;
    }
    processChild.once('spawn', () => launch.start.end());
    processChild.once('error', () => {
      fail(launch.start, 'spawn_failed');
      launch.start.end();
    });
    endWithProcess(launch.span, processChild);
  });

  function processSpan(processChild: ChildProcess | undefined, scope: Scope | undefined, start: 'cold' | 'warm'): Span | undefined {
    const tool = toolOf(scope);
    const span = child(`tool process${tool ? ` ${tool}` : ''}`, { ...toolAttributes(scope), [ATTRIBUTE.processStart]: start }, scope);
    if (span && processChild) endWithProcess(span, processChild);
    return span;
  }

  function endWithProcess(span: Span, processChild: ChildProcess): void {
    if (processChild.pid !== undefined) span.setAttribute(ATTRIBUTE.processPid, processChild.pid);
    processChild.once('exit', (code, signal) => {
      if (code !== null) span.setAttribute(ATTRIBUTE.processExitCode, code);
      if (signal) span.setAttribute(ATTRIBUTE.processSignal, signal);
      if (code !== 0) fail(span, signal ?? `exit_${code}`);
      span.end();
    });
  }

  // A tool search: its ranking, results and any fallback (never the request's text).
  const searches = new WeakMap<SearchMessage, Span>();
  subscriptions.on(searchChannel.start, (data) => {
    const message = data as SearchMessage;
    const span = child('tool search', { [ATTRIBUTE.searchRanking]: message.ranking });
    if (span) searches.set(message, span);
  });
  subscriptions.on(searchChannel.asyncEnd, (data) => {
    const message = data as SearchMessage;
    const span = searches.get(message);
    if (!span) return;
    span.setAttribute(ATTRIBUTE.searchRanking, message.ranking);
    span.setAttribute(ATTRIBUTE.searchResults, message.results ?? 0);
    if (message.fallback) span.setAttribute(ATTRIBUTE.searchFallback, message.fallback);
    span.end();
  });

  const checks = new WeakMap<ValidateMessage, Span>();
  subscriptions.on(validateChannel.start, (data) => {
    const message = data as ValidateMessage;
    const span = child(`validate ${message.side}`, {});
    if (span) checks.set(message, span);
  });
  subscriptions.on(validateChannel.asyncEnd, (data) => {
    const message = data as ValidateMessage;
    const span = checks.get(message);
    if (!span) return;
    if (message.error !== undefined) fail(span, 'schema_mismatch');
    span.end();
  });

  return {
    shutdown: async () => {
      subscriptions.close();
      unbindScopes();
      await provider.forceFlush().catch(() => {});
      await provider.shutdown().catch(() => {});
    },
  };
}

/** The request span's attributes known at its start (the MCP conventions' names). */
function requestAttributes(message: RequestMessage): Attributes {
  const attributes: Attributes = {
    [ATTRIBUTE.method]: message.method,
    // stdio is a pipe; Streamable HTTP runs over TCP.
    [ATTRIBUTE.networkTransport]: message.transport === 'stdio' ? 'pipe' : 'tcp',
  };
  if (message.method === 'tools/call') attributes[ATTRIBUTE.operationName] = 'execute_tool';
  if (message.requestId !== undefined) attributes[ATTRIBUTE.requestId] = String(message.requestId);
  if (message.sessionId !== undefined) attributes[ATTRIBUTE.sessionId] = message.sessionId;
  if (message.protocolVersion !== undefined) attributes[ATTRIBUTE.protocolVersion] = message.protocolVersion;
  if (message.transport === 'http') attributes[ATTRIBUTE.networkProtocol] = 'http';
  if (message.client?.address !== undefined) attributes[ATTRIBUTE.clientAddress] = message.client.address;
  if (message.client?.port !== undefined) attributes[ATTRIBUTE.clientPort] = message.client.port;
  return attributes;
}

function toolAttributes(scope: Scope | undefined): Attributes {
  const tool = toolOf(scope);
  return tool === undefined ? {} : { [ATTRIBUTE.toolName]: tool };
}

type Sdk = typeof import('@opentelemetry/sdk-trace');

/** OTEL_TRACES_SAMPLER and its argument, as settings.ts read them. */
function sampler(sdk: Sdk, settings: TraceSettings) {
  const ratio = () => new sdk.TraceIdRatioBasedSampler(settings.samplerArg ?? 1);
  switch (settings.sampler) {
    case 'always_on':
      return new sdk.AlwaysOnSampler();
    case 'always_off':
      return new sdk.AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_off':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new sdk.ParentBasedSampler({ root: ratio() });
    default:
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() });
  }
}
