/**
 * The agent's trace, handed on to the tools it runs (ADR 0033). When the application has
 * @opentelemetry/api (an optional peer) and a span is active as a tool is called, the tool
 * process starts with TRACEPARENT/TRACESTATE naming that span, so spans the tool makes join
 * the agent's trace. Without the API, or without an active span, nothing changes.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import diagnostics from 'node:diagnostics_channel';
import { CHANNEL, traceEnv, type ProcessMessage } from 'twylt/toolset';

type Api = typeof import('@opentelemetry/api');

/** Set while one of our calls runs: only its processes get the agent's context. */
const inCall = new AsyncLocalStorage<true>();
let loading: Promise<Api | undefined> | undefined;

function loadApi(): Promise<Api | undefined> {
  loading ??= import('@opentelemetry/api').then(
    (api) => {
      diagnostics.subscribe(CHANNEL.spawn, (data) => handOn(api, data as ProcessMessage));
      return api;
    },
    () => undefined,
  );
  return loading;
}

function handOn(api: Api, message: ProcessMessage): void {
  // A warm process started before any call: it belongs to none (as in twylt-mcp).
  if (message.warm || !inCall.getStore()) return;
  const context = api.trace.getSpanContext(api.context.active());
  if (!context || !api.trace.isSpanContextValid(context)) return;
  message.env = { ...message.env, ...traceEnv(context) };
}

/** Run `call` so that the tool processes it starts continue the active trace, if any. */
export async function withTraceContext<T>(call: () => Promise<T>): Promise<T> {
  await loadApi();
  return inCall.run(true, call);
}
