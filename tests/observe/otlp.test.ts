/**
 * Spans over OTLP/HTTP from a real bridge, turned on by the standard OTEL_* environment:
 * named and attributed by the MCP conventions, continuing the caller's trace (params._meta
 * over stdio, the HTTP headers over HTTP), and handed on to the tool process in TRACEPARENT.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JS_RUNTIME } from '../support/runtimes.js';
import { ROOT } from '../support/process.js';
import { SLEEPER, startBridge, startRawBridge, waitFor } from '../support/mcp.js';
import { MAX_ATTRIBUTE_LENGTH } from '../../packages/twylt/src/observe/tracing.js';
import { MCP_HEADERS, rawRequest, sseMessages, startHttpBridge, toolsCall } from '../support/mcp-http.js';
import { blocksUnder, readDoc } from '../docs/markdown.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support.js';

/** The environment docs/observability.md shows, as KEY=VALUE lines. */
const DOC_ENV = Object.fromEntries(
  blocksUnder(readDoc('docs/observability.md'), 'Traces', 'env')[0]!
    .body.split('\n')
    .filter(Boolean)
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
);

const TRACEPARENT_TOOL = [...JS_RUNTIME, `${ROOT}tests/fixtures/mcp/traceparent.mjs`];
const tools = (...commands: ReadonlyArray<readonly string[]>) => commands.flatMap((command) => ['--', ...command]);
const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';
const SERVER = 2; // SpanKind.SERVER + 1, as OTLP numbers kinds

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver?.close());

/** The doc's environment, pointed at the receiver (and exporting every 50 ms). */
const otel = (protocol: string, extra: Record<string, string> = {}) => {
  expect(DOC_ENV).toMatchObject({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' });
  return { ...DOC_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_BSP_SCHEDULE_DELAY: '50', ...extra };
};

/** The spans of `traceId`, once `count` have arrived. */
async function trace(traceId: string, count: number): Promise<ReceivedSpan[]> {
  const of = () => receiver.spans().filter((span) => span.traceId === traceId);
  await waitFor(() => of().length >= count, `${count} spans of trace ${traceId} (have ${JSON.stringify(of().map((s) => s.name))})`, 20_000);
  return of();
}

const named = (spans: ReceivedSpan[], name: string) => {
  const found = spans.filter((span) => span.name === name);
  expect(found, `one span named ${name} in ${JSON.stringify(spans.map((s) => s.name))}`).toHaveLength(1);
  return found[0]!;
};

/** The one span named `name` in trace `traceId`, once it has arrived. */
async function spanNamed(traceId: string, name: string): Promise<ReceivedSpan> {
  const of = () => receiver.spans().filter((span) => span.traceId === traceId && span.name === name);
  await waitFor(() => of().length > 0, `the span ${name} of trace ${traceId}`, 20_000);
  return named(receiver.spans().filter((span) => span.traceId === traceId), name);
}

describe('traces over OTLP/HTTP JSON, stdio bridge', () => {
  it('continue the caller\'s trace from params._meta, with the conventions\' attributes, and hand the tool process its span', async () => {
    const bridge = await startBridge(tools(TRACEPARENT_TOOL, SLEEPER), otel('http/json', { OTEL_SERVICE_NAME: 'bridge-under-test' }));
    try {
      const result = await bridge.client.callTool({ name: 'traceparent', arguments: {}, _meta: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, tracestate: 'vendor=abc' } });
      const seen = result.structuredContent as { traceparent: string; tracestate: string | null };
      const spans = await trace(CALLER_TRACE, 5);
      const server = named(spans, 'tools/call traceparent');
      expect(server.kind).toBe(SERVER);
      expect(server.parentSpanId).toBe(CALLER_SPAN);
      expect(server.service).toBe('bridge-under-test');
      expect(server.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'traceparent',
        'gen_ai.operation.name': 'execute_tool',
        'jsonrpc.request.id': expect.any(String),
        'network.transport': 'pipe',
      });
      expect(server.attributes).not.toHaveProperty('error.type');
      const process = named(spans, 'tool process traceparent');
      expect(process.parentSpanId).toBe(server.spanId);
      expect(process.attributes).toMatchObject({ 'process.exit.code': 0, 'twylt.process.start': 'cold' });
      for (const name of ['cold start', 'validate input', 'validate output']) expect(named(spans, name).parentSpanId).toBe(server.spanId);
      // The tool process was started with TRACEPARENT naming its own span, in the caller's trace.
      expect(seen.traceparent).toBe(`00-${CALLER_TRACE}-${process.spanId}-01`);
      expect(seen.tracestate).toBe('vendor=abc');

      // A failed call: its error.type is the failure kind, the span's status an error.
      await bridge.client.callTool({ name: 'sleeper', arguments: { action: 'fail' }, _meta: { traceparent: `00-${'1'.repeat(32)}-${CALLER_SPAN}-01` } });
      const failed = named(await trace('1'.repeat(32), 3), 'tools/call sleeper');
      expect(failed.attributes['error.type']).toBe('failed');
      expect(failed.status.code).toBe(2); // STATUS_CODE_ERROR
      // Its tool process span is ended too (a span is exported only once ended), as an error.
      const failedProcess = await spanNamed('1'.repeat(32), 'tool process sleeper');
      expect(failedProcess.parentSpanId).toBe(failed.spanId);
      expect(failedProcess.attributes).toMatchObject({ 'process.exit.code': 5, 'error.type': 'exit_5', 'twylt.process.start': 'cold' });
      expect(failedProcess.status.code).toBe(2);
      // And a crash: the process span names the signal.
      await bridge.client.callTool({ name: 'sleeper', arguments: { action: 'crash' }, _meta: { traceparent: `00-${'2'.repeat(32)}-${CALLER_SPAN}-01` } });
      const crashed = await spanNamed('2'.repeat(32), 'tool process sleeper');
      expect(crashed.status.code).toBe(2);
      expect(crashed.attributes['error.type']).toMatch(/^(exit_\d+|SIG[A-Z]+)$/);
    } finally {
      await bridge.close();
    }
  }, 60_000);

  it('starts a new trace without a caller\'s context, and gives a warm process no TRACEPARENT (it started before the call)', async () => {
    const bridge = await startBridge(['--warm', '1', ...tools(TRACEPARENT_TOOL)], otel('http/json'));
    try {
      const before = new Set(receiver.spans().map((span) => span.traceId));
      const result = await bridge.client.callTool({ name: 'traceparent', arguments: {} });
      expect((result.structuredContent as { traceparent: unknown }).traceparent).toBeNull();
      await waitFor(() => receiver.spans().some((span) => span.name === 'tools/call traceparent' && !before.has(span.traceId)), 'the server span', 20_000);
      const server = receiver.spans().find((span) => span.name === 'tools/call traceparent' && !before.has(span.traceId))!;
      expect(server.parentSpanId).toBeUndefined();
      const spans = await trace(server.traceId, 3);
      expect(named(spans, 'warm take').attributes['twylt.warm.hit']).toBe(true);
      expect(named(spans, 'tool process traceparent').attributes['twylt.process.start']).toBe('warm');
    } finally {
      await bridge.close();
    }
  }, 60_000);
});

describe('traces from the HTTP bridge', () => {
  it('continue a trace from the traceparent header, name the session, and put trace_id and span_id in the call\'s log line', async () => {
    const bridge = await startHttpBridge(tools(TRACEPARENT_TOOL), otel('http/json'));
    try {
      const traceId = 'a'.repeat(32);
      const response = await rawRequest(bridge.url, {
        headers: { ...MCP_HEADERS, traceparent: `00-${traceId}-${CALLER_SPAN}-01`, 'mcp-session-id': 'session-1' },
        body: toolsCall(7, 'traceparent', {}),
      });
      expect(response.status).toBe(200);
      const output = sseMessages(response.body)[0]!.result.structuredContent as { traceparent: string };
      const spans = await trace(traceId, 5);
      const server = named(spans, 'tools/call traceparent');
      expect(server.parentSpanId).toBe(CALLER_SPAN);
      expect(server.attributes).toMatchObject({ 'mcp.session.id': 'session-1', 'jsonrpc.request.id': '7', 'network.transport': 'tcp', 'network.protocol.name': 'http', 'client.address': '127.0.0.1' });
      expect(output.traceparent).toBe(`00-${traceId}-${named(spans, 'tool process traceparent').spanId}-01`);
      const line = bridge.events().find((event) => event.event === 'call');
      expect(line).toMatchObject({ tool: 'traceparent', trace_id: traceId, span_id: server.spanId });
    } finally {
      await bridge.stop();
    }
  }, 60_000);
});

describe('which context wins, and how long an attribute may be', () => {
  it('params._meta wins over the HTTP traceparent header when a request has both (docs/observability.md)', async () => {
    const bridge = await startHttpBridge(tools(TRACEPARENT_TOOL), otel('http/json'));
    try {
      const [metaTrace, headerTrace] = ['d'.repeat(32), 'e'.repeat(32)];
      const metaSpan = '1111111111111111';
      const body = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'traceparent', arguments: {}, _meta: { traceparent: `00-${metaTrace}-${metaSpan}-01` } } });
      const response = await rawRequest(bridge.url, { headers: { ...MCP_HEADERS, traceparent: `00-${headerTrace}-${CALLER_SPAN}-01` }, body });
      expect(response.status).toBe(200);
      const server = await spanNamed(metaTrace, 'tools/call traceparent');
      expect(server.parentSpanId).toBe(metaSpan);
      const output = sseMessages(response.body)[0]!.result.structuredContent as { traceparent: string };
      expect(output.traceparent).toMatch(new RegExp(`^00-${metaTrace}-`));
      expect(receiver.spans().filter((span) => span.traceId === headerTrace)).toEqual([]);
    } finally {
      await bridge.stop();
    }
  }, 60_000);

  it(`a 4 MB JSON-RPC id is exported cut to ${MAX_ATTRIBUTE_LENGTH} characters, and the call is answered`, async () => {
    const bridge = await startRawBridge(tools(TRACEPARENT_TOOL), otel('http/json'));
    try {
      const traceId = 'f'.repeat(32);
      const id = `big-${'x'.repeat(4 * 1024 * 1024)}`;
      const params = { name: 'traceparent', arguments: {}, _meta: { traceparent: `00-${traceId}-${CALLER_SPAN}-01` } };
      bridge.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }));
      const answer = await bridge.answer((message) => message.id === id, 'the answer to the 4 MB id', 30_000);
      expect(answer.result?.isError, JSON.stringify(answer).slice(0, 500)).toBeFalsy();
      const server = await spanNamed(traceId, 'tools/call traceparent');
      expect(server.attributes['jsonrpc.request.id']).toBe(id.slice(0, MAX_ATTRIBUTE_LENGTH));
      for (const span of receiver.spans().filter((each) => each.traceId === traceId)) {
        for (const value of Object.values(span.attributes)) if (typeof value === 'string') expect(value.length).toBeLessThanOrEqual(MAX_ATTRIBUTE_LENGTH);
      }
    } finally {
      bridge.child.kill('SIGTERM');
      await bridge.exited;
    }
  }, 60_000);
});

describe('traces over OTLP/HTTP protobuf', () => {
  it('are sent as application/x-protobuf holding the span names and the trace id', async () => {
    const bridge = await startBridge(tools(TRACEPARENT_TOOL), otel('http/protobuf'));
    try {
      const traceId = 'b'.repeat(32);
      await bridge.client.callTool({ name: 'traceparent', arguments: {}, _meta: { traceparent: `00-${traceId}-${CALLER_SPAN}-01` } });
      const raw = Buffer.from(traceId, 'hex');
      const ours = () => receiver.requests.filter((request) => request.contentType === 'application/x-protobuf' && request.body.includes(raw));
      await waitFor(() => ours().some((request) => request.body.includes('tools/call traceparent')), 'a protobuf export with the server span', 20_000);
      expect(ours()[0]!.path).toBe('/v1/traces');
    } finally {
      await bridge.close();
    }
  }, 60_000);
});
