/**
 * twylt/observe started, closed and started again in one process (issue 36): close() takes
 * back every subscription and store binding it made, so that no channel is left observed
 * (the core then skips its events altogether) and a second start counts each call once.
 */
import diagnostics from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startObserving, traceSettings } from '../../packages/twylt/dist/observe/index.js';
import { CHANNEL } from '../../packages/twylt/dist/toolset/index.js';
import { startOtlpReceiver, type OtlpReceiver } from './support.js';

const TRACING = ['start', 'end', 'asyncStart', 'asyncEnd', 'error'];
const TRACING_NAMES = new Set<string>([CHANNEL.request, CHANNEL.call, CHANNEL.validate]);

/** Every channel of the core (a tracing channel's five), named, that has a subscriber or a bound store. */
function observedChannels(): string[] {
  const names = Object.values(CHANNEL).flatMap((name) => (TRACING_NAMES.has(name) ? TRACING.map((event) => `tracing:${name}:${event}`) : [name]));
  return names.filter((name) => diagnostics.channel(name).hasSubscribers);
}

const callChannel = diagnostics.tracingChannel(CHANNEL.call);
const queueChannel = diagnostics.channel(CHANNEL.queue);

const callsOf = (text: string, tool: string) => Number(new RegExp(`^twylt_tool_calls_total\\{gen_ai_tool_name="${tool}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver?.close());

describe('twylt/observe started twice in one process', () => {
  it('close() leaves no channel observed, and a second start counts each call once', async () => {
    expect(observedChannels()).toEqual([]);
    const settings = traceSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })!;
    expect(settings).toBeDefined();
    const call = (tool: string) => callChannel.tracePromise(async () => 'done', { tool });

    const first = await startObserving({ serviceName: 'lifecycle', metrics: { host: '127.0.0.1', port: 0 }, traces: settings });
    expect(first.tracing).toBe(true);
    await call('once');
    expect(callsOf(await (await fetch(first.metrics!.url)).text(), 'once')).toBe(1);
    await first.close();
    expect(observedChannels(), 'channels still observed after close()').toEqual([]);

    const second = await startObserving({ serviceName: 'lifecycle', metrics: { host: '127.0.0.1', port: 0 }, traces: settings });
    await call('again');
    queueChannel.publish({ kind: 'wait', queued: 1, running: 1, ticket: {} });
    const text = await (await fetch(second.metrics!.url)).text();
    expect(callsOf(text, 'again')).toBe(1);
    expect(callsOf(text, 'once'), 'the first registry is not the second').toBe(0);
    await second.close();
    expect(observedChannels()).toEqual([]);
  });
});
