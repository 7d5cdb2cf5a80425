/**
 * twylt/observe: metrics and spans as an optional layer over any consumer (ADR 0033). A
 * consumer imports it only when `--metrics` or the OTEL_* environment asks for it; it
 * subscribes to the core's channels (toolset/events.ts) and loads the OpenTelemetry SDK
 * only for traces. Nothing on a tool's side ever loads it.
 *
 *   const observing = await startObserving({ metrics: { host: '127.0.0.1', port: 9464 }, serviceName: 'twylt-mcp' });
 *   ...
 *   await observing.close();
 */
import { collectMetrics, type Collecting } from './metrics.js';
import { serveMetrics, type MetricsEndpoint, type MetricsServeOptions } from './serve.js';
import { traceSettings, type TraceSettings } from './settings.js';

export { ObserveSettingsError, traceSettings, type TraceSettings } from './settings.js';
export { ATTRIBUTE, LABEL, METRIC } from './names.js';
export { METRICS_PATH, type MetricsEndpoint, type MetricsServeOptions } from './serve.js';

export interface ObserveOptions {
  /** Serve Prometheus metrics here (`--metrics HOST:PORT`). */
  metrics?: MetricsServeOptions;
  /** Trace settings; default: read from the OTEL_* environment (traceSettings). */
  traces?: TraceSettings | null;
  /** `service.name` unless OTEL_SERVICE_NAME says otherwise. */
  serviceName: string;
}

export interface Observing {
  metrics?: MetricsEndpoint;
  tracing: boolean;
  /** Stop serving metrics; send the spans still buffered. */
  close(): Promise<void>;
}

/** Whether anything asks to be observed: decide before importing this module's heavier parts. */
export function wantsObserving(metrics: unknown, env: NodeJS.ProcessEnv = process.env): boolean {
  return metrics !== undefined || traceSettings(env) !== undefined;
}

/** Start what `options` asks for. Rejects with an Error that says why (a port taken, a bad setting). */
export async function startObserving(options: ObserveOptions): Promise<Observing> {
  const traces = options.traces === undefined ? traceSettings() : (options.traces ?? undefined);
  let collecting: Collecting | undefined;
  let metrics: MetricsEndpoint | undefined;
  if (options.metrics) {
    collecting = collectMetrics();
    try {
      metrics = await serveMetrics(collecting.registry, options.metrics);
    } catch (error) {
      collecting.close();
      throw error;
    }
  }
  let tracing: { shutdown(): Promise<void> } | undefined;
  if (traces) {
    try {
      const { startTracing } = await import('./tracing.js');
      tracing = await startTracing(traces, options.serviceName);
    } catch (error) {
      await metrics?.close();
      collecting?.close();
      throw error;
    }
  }
  return {
    metrics,
    tracing: tracing !== undefined,
    close: async () => {
      collecting?.close();
      await Promise.all([metrics?.close(), tracing?.shutdown()]);
    },
  };
}
