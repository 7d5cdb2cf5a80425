/**
 * The warm pool's bookkeeping and the client's fallback, against real processes (issue 30,
 * items 12 and 13): a taken process leaves the pool, so no idle timer of the pool can kill a
 * call it serves; a warm process killed as the call takes it gives a cold call, never its
 * own death; a tool this input kills is reported, and run once.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AbortError, ToolCrashError, TwyltClient } from 'twylt/client';
import { WarmCap, WarmPool } from 'twylt/toolset';
import { SLEEPER } from '../support/mcp.js';
import { ROOT, fixture } from '../support/process.js';
import { isAlive, waitGone, waitUntilReadingStdin } from '../support/processes.js';
import { JS_RUNTIME } from '../support/runtimes.js';

const CRASH = [...JS_RUNTIME, `${ROOT}tests/toolset/fixtures/crash-on-input.mjs`];
const scratch = mkdtempSync(join(tmpdir(), 'twylt-warm-pool-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const pools: WarmPool[] = [];
afterAll(() => {
  for (const pool of pools) pool.close();
});
function pool(command: readonly string[], options: { size?: number; idleMs?: number; env?: Record<string, string> } = {}): WarmPool {
  const made = new WarmPool({ size: options.size ?? 1, command, env: options.env, cap: new WarmCap(4), idleMs: options.idleMs ?? 0 });
  pools.push(made);
  return made;
}

/** The processes a call took from `source`. */
function watched(source: { take(): ChildProcessWithoutNullStreams | undefined }) {
  const taken: ChildProcessWithoutNullStreams[] = [];
  return {
    taken,
    source: {
      take: () => {
        const child = source.take();
        if (child) taken.push(child);
        return child;
      },
    },
  };
}

describe('a taken process leaves the pool', () => {
  it('is no longer listed and is never handed out twice', async () => {
    const warm = pool(fixture('warm_probe'), { size: 2 });
    const [first, second] = warm.pids;
    const taken = warm.take()!;
    expect(taken.pid).toBe(first);
    expect(warm.pids).not.toContain(first);
    expect(warm.pids).toContain(second);
    const next = warm.take()!;
    expect(next.pid).toBe(second);
    for (const child of [taken, next]) {
      child.kill('SIGKILL');
      expect(await waitGone(child.pid!, 15_000)).toBe(true);
    }
  });

  it('the idle timer that retires waiting processes never kills a call in progress', async () => {
    // Taken at once, in the tick the pool started it, so well within its idle time. The call
    // runs until it is aborted (a minute at most), however fast the machine.
    const warm = pool(SLEEPER, { idleMs: 300 });
    const client = new TwyltClient(SLEEPER);
    const controller = new AbortController();
    const { taken, source } = watched(warm);
    const call = client.call({ action: 'wait', seconds: 60 }, { transport: 'stdin', warm: source, signal: controller.signal, timeoutMs: 0 });
    call.catch(() => {});
    expect(taken).toHaveLength(1);
    const busy = taken[0]!.pid!;
    // The replacement started after the taken one, with the same idle time: once it is
    // retired, a timer the taken one still had would have fired too.
    const [replacement] = warm.pids;
    expect(replacement).toBeTypeOf('number');
    expect(await waitGone(replacement!, 20_000)).toBe(true);
    expect(isAlive(busy)).toBe(true);
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(AbortError);
  });
});

describe('a warm process that dies before it reads the input', () => {
  it('killed while it waits, before the consumer heard: the call runs cold and answers', async () => {
    // The scenario of warm.test.ts "died as the call took it", many times over: the pipe may
    // still take the write (the process's threads are still being torn down).
    const client = new TwyltClient(fixture('warm_probe'));
    for (let round = 0; round < 3; round++) {
      const warm = pool(fixture('warm_probe'));
      const [pid] = warm.pids;
      await waitUntilReadingStdin(pid!, 20_000);
      process.kill(pid!, 'SIGKILL');
      // The event loop does not run meanwhile: the pool still holds it as waiting.
      const end = Date.now() + 10_000;
      while (isAlive(pid!) && Date.now() < end) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
      const { taken, source } = watched(warm);
      const result = await client.call({ note: `round ${round}` }, { transport: 'stdin', warm: source });
      expect(taken.map((child) => child.pid)).toEqual([pid]);
      expect(result.output).toMatchObject({ note: `round ${round}`, calls: 1 });
      warm.close();
    }
  });
});

describe('a tool that this input kills', () => {
  // SIGKILL too: a kill after the input was written is the input's, not a dying warm process.
  it.each(['SIGSEGV', 'SIGKILL'] as const)('%s: reported as the crash it is, run once, by the process the call took', async (signal) => {
    const log = join(scratch, `${signal}.log`);
    const warm = pool(CRASH, { env: { CRASH_LOG: log } });
    const client = new TwyltClient(CRASH, { env: { CRASH_LOG: log } });
    const { taken, source } = watched(warm);
    const error = await client.call({ die: signal }, { transport: 'stdin', warm: source }).catch((caught: unknown) => caught);
    expect(taken).toHaveLength(1);
    expect(error).toBeInstanceOf(ToolCrashError);
    expect((error as ToolCrashError).signal).toBe(signal);
    const runs = readFileSync(log, 'utf8').trim().split('\n');
    expect(runs).toHaveLength(1);
    expect(runs[0]!.split(' ')[0]).toBe(String(taken[0]!.pid));
  });
});
