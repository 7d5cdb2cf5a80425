/**
 * Whether, and how, to observe: read from the command line (`--metrics`) and the standard
 * OpenTelemetry SDK environment. Pure: no module of the SDK is loaded to decide.
 */

export type OtlpProtocol = 'http/json' | 'http/protobuf';

export interface TraceSettings {
  protocol: OtlpProtocol;
  /** OTEL_TRACES_SAMPLER, lower case (default parentbased_always_on). */
  sampler: string;
  samplerArg?: number;
  /** OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_EXPORT_TIMEOUT (the SDK's defaults when unset). */
  scheduleDelayMs?: number;
  exportTimeoutMs?: number;
}

/** A setting that cannot be honoured: the consumer refuses to start (its usage exit) and says why. */
export class ObserveSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ObserveSettingsError';
  }
}

const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];

/**
 * Traces are on when OTEL_TRACES_EXPORTER names `otlp`, or when it is unset and an OTLP
 * endpoint is given; OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none keep them off.
 * Returns undefined when off.
 */
export function traceSettings(env: NodeJS.ProcessEnv = process.env): TraceSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  const endpoint = Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (exporters.length === 0 ? !endpoint : !exporters.includes('otlp')) {
    const unknown = exporters.find((name) => name !== 'none' && name !== 'otlp');
    if (unknown !== undefined) throw new ObserveSettingsError(`OTEL_TRACES_EXPORTER=${JSON.stringify(unknown)} is not supported; use otlp (or none)`);
    return undefined;
  }
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf').trim().toLowerCase();
  if (protocol !== 'http/json' && protocol !== 'http/protobuf') {
    throw new ObserveSettingsError(`OTEL_EXPORTER_OTLP_PROTOCOL=${JSON.stringify(protocol)} is not supported; use http/protobuf or http/json`);
  }
  const sampler = (env.OTEL_TRACES_SAMPLER || 'parentbased_always_on').trim().toLowerCase();
  if (!SAMPLERS.includes(sampler)) throw new ObserveSettingsError(`OTEL_TRACES_SAMPLER=${JSON.stringify(sampler)} is not supported; use one of ${SAMPLERS.join(', ')}`);
  const settings: TraceSettings = { protocol, sampler };
  if (sampler.endsWith('traceidratio') && env.OTEL_TRACES_SAMPLER_ARG !== undefined) {
    const ratio = Number(env.OTEL_TRACES_SAMPLER_ARG);
    if (!(ratio >= 0 && ratio <= 1)) throw new ObserveSettingsError(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got ${JSON.stringify(env.OTEL_TRACES_SAMPLER_ARG)}`);
    settings.samplerArg = ratio;
  }
  settings.scheduleDelayMs = milliseconds(env, 'OTEL_BSP_SCHEDULE_DELAY');
  settings.exportTimeoutMs = milliseconds(env, 'OTEL_BSP_EXPORT_TIMEOUT');
  return settings;
}

function milliseconds(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const text = env[name];
  if (text === undefined || text.trim() === '') return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) throw new ObserveSettingsError(`${name} must be a whole number of milliseconds, got ${JSON.stringify(text)}`);
  return value;
}
