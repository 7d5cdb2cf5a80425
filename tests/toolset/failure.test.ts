/**
 * One failure vocabulary (toolset/failure.ts, ADR 0031): the kind a model reads with its
 * message (describeFailure, twylt-ai's TwyltCallError.kind), the kind a twylt-mcp log line
 * records (outcomeOf) and failureKind, which metrics report as `error.type`, are one and the
 * same for real failures of real tool processes; an error that wraps another keeps it as
 * `cause` and has its kind.
 */
import { describe, expect, it } from 'vitest';
import { ResourceLimitError, TimeoutError, ToolError } from 'twylt/client';
import {
  CallLimiter,
  FAILURE_KINDS,
  QueueFullError,
  UndescribedError,
  createRunner,
  describeEntry,
  describeFailure,
  failureKind,
  type FailureKind,
} from 'twylt/toolset';
import { StartupError, describeTools, outcomeOf } from 'twylt-mcp';
import { SLEEPER } from '../support/mcp.js';

/** A command that never answers its describe. */
const SILENT = [process.execPath, '-e', 'setTimeout(() => {}, 60_000)'];

/** What `call` rejected with. */
async function failureOf(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => {
      throw new Error('the call succeeded');
    },
    (error: unknown) => error,
  );
}

describe('the kind of a real failure is one word for the model, the log and metrics', () => {
  const cases: [string, FailureKind, () => Promise<unknown>][] = [
    ['a business failure (exit 5)', 'failed', () => createRunner({ command: SLEEPER }).call({ action: 'fail' })],
    ['arguments that break the inputSchema', 'invalid_input', () => createRunner({ command: SLEEPER }).call({ action: 'nap' })],
    ['a time-out', 'timeout', () => createRunner({ command: SLEEPER, timeoutMs: 300 }).call({ action: 'wait', seconds: 30 })],
    ['a cancelled call', 'cancelled', () => createRunner({ command: SLEEPER }).call({ action: 'wait', seconds: 30 }, { signal: AbortSignal.timeout(300) })],
    ['a crash', 'broken', () => createRunner({ command: SLEEPER }).call({ action: 'crash' })],
    ['a command that cannot start', 'broken', () => createRunner({ command: ['/nonexistent/tool'] }).call({}, { validate: false })],
  ];
  it.each(cases)('%s: %s', async (_, kind, call) => {
    const error = await failureOf(call());
    expect([failureKind(error), describeFailure('sleeper', error).kind, outcomeOf(error).outcome]).toEqual([kind, kind, kind]);
  });

  it('a call refused by a full queue is busy, everywhere', async () => {
    const limiter = new CallLimiter({ maxConcurrent: 1, maxQueue: 0 });
    let release!: () => void;
    const running = limiter.run(() => new Promise<void>((resolve) => (release = resolve)));
    const error = await failureOf(limiter.run(async () => {}));
    release();
    await running;
    expect(error).toBeInstanceOf(QueueFullError);
    expect([failureKind(error), outcomeOf(error).outcome]).toEqual(['busy', 'busy']);
  });

  it("an abort signal's own reason (a call aborted while it waited for a slot) is cancelled", () => {
    const controller = new AbortController();
    controller.abort();
    expect(failureKind(controller.signal.reason)).toBe('cancelled');
  });

  it('the vocabulary is the eight words, nothing else', () => {
    expect(FAILURE_KINDS).toEqual(['invalid_input', 'failed', 'denied', 'timeout', 'cancelled', 'limit_exceeded', 'busy', 'broken']);
  });
});

describe('a resource limit of a sandbox', () => {
  it.each([
    ['memory', 'memory'],
    ['processes', 'number of processes'],
    ['cpu_time', 'CPU time'],
  ] as const)('%s: limit_exceeded, with a message that names the limit and says whether to retry', (limit, named) => {
    const error = new ResourceLimitError(['tool'], limit, { stderr: 'Killed' });
    expect(error.message).toBe(`tool reached its sandbox's limit of ${named} and was stopped`);
    expect(failureKind(error)).toBe('limit_exceeded');
    expect(outcomeOf(error)).toEqual({ outcome: 'limit_exceeded', exitCode: null, errorType: 'ResourceLimitError' });
    expect(describeFailure('probe', error)).toEqual({
      kind: 'limit_exceeded',
      message: `"probe" was stopped: it reached the limit of ${named} its sandbox allows. The same call would fail again; a smaller input may succeed.`,
    });
  });
});

describe('re-wrapping keeps the cause', () => {
  it('a describe that timed out: the UndescribedError holds the TimeoutError, and has its kind', async () => {
    const error = await failureOf(describeEntry({ command: SILENT }, { defaults: { describeTimeoutMs: 300 } }));
    expect(error).toBeInstanceOf(UndescribedError);
    expect((error as Error).cause).toBeInstanceOf(TimeoutError);
    expect(failureKind(error)).toBe('timeout');
  });

  it("twylt-mcp's StartupError holds the ToolsetError that lists the problems", async () => {
    const error = await failureOf(describeTools([{ command: SILENT }], { defaults: { describeTimeoutMs: 300 }, strict: true }));
    expect(error).toBeInstanceOf(StartupError);
    expect(((error as Error).cause as Error).name).toBe('ToolsetError');
  });

  it('a wrapper of a tool error has the tool error’s kind, however deep', () => {
    const tool = new ToolError(['tool'], 6, { stdout: '', stderr: '' }, undefined);
    const wrapped = new Error('outer', { cause: new Error('middle', { cause: tool }) });
    expect(failureKind(wrapped)).toBe('denied');
    // A cycle of causes ends: an error that says nothing typed is broken.
    const looped = new Error('loop');
    looped.cause = looped;
    expect(failureKind(looped)).toBe('broken');
  });
});
