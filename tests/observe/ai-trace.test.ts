/**
 * twylt-ai hands the agent's active trace to the tool processes it starts: with
 * @opentelemetry/api in the application and a span active as a tool is called, the tool sees
 * TRACEPARENT naming that span; with none active, no TRACEPARENT.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ROOT_CONTEXT, context, trace, type Context, type ContextManager } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { twyltTools, type TwyltAiTool } from 'twylt-ai';
import { ROOT } from '../support/process.js';
import { JS_RUNTIME } from '../support/runtimes.js';

const TRACEPARENT_TOOL = [...JS_RUNTIME, `${ROOT}tests/fixtures/mcp/traceparent.mjs`];

/** What an application's OpenTelemetry set-up provides: the active context, per async flow. */
class FlowContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.#storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    return this;
  }
}

beforeAll(() => {
  context.setGlobalContextManager(new FlowContextManager());
});
afterAll(() => {
  context.disable();
});

const execute = (tool: TwyltAiTool) => Promise.resolve(tool.execute!({}, { toolCallId: 'call-1', messages: [] }) as Promise<{ traceparent: string | null }>);

describe('twylt-ai and the agent\'s trace', () => {
  it('starts the tool with TRACEPARENT naming the span active at the call, and none without one', async () => {
    const tools = await twyltTools([TRACEPARENT_TOOL]);
    const agentSpan = trace.wrapSpanContext({ traceId: 'c'.repeat(32), spanId: 'd'.repeat(16), traceFlags: 1 });
    const inSpan = await context.with(trace.setSpan(ROOT_CONTEXT, agentSpan), () => execute(tools.traceparent!));
    expect(inSpan.traceparent).toBe(`00-${'c'.repeat(32)}-${'d'.repeat(16)}-01`);
    const outside = await execute(tools.traceparent!);
    expect(outside.traceparent).toBeNull();
  }, 60_000);
});
