/**
 * CallLimiter (twylt/toolset): at most N calls at once, a bounded first-come-first-served
 * queue, refusal before running when full, and queued calls that leave on abort. The
 * process-level proof (200 calls through twylt-mcp --http) is in tests/mcp/http-load.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { CallLimiter, QueueFullError } from '../../packages/twylt/src/toolset/index.js';

/** A task that runs until released, recording when it started. */
function gate(log: string[], name: string) {
  let release!: (value: string) => void;
  const done = new Promise<string>((resolve) => (release = resolve));
  return {
    task: () => {
      log.push(name);
      return done;
    },
    release: () => release(name),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('CallLimiter', () => {
  it('runs at most maxConcurrent tasks, then the waiting ones in arrival order', async () => {
    const limiter = new CallLimiter({ maxConcurrent: 2, maxQueue: 10 });
    const log: string[] = [];
    const gates = ['a', 'b', 'c', 'd'].map((name) => gate(log, name));
    const results = gates.map((g) => limiter.run(g.task));
    await tick();
    expect(log).toEqual(['a', 'b']);
    expect([limiter.running, limiter.queued]).toEqual([2, 2]);
    gates[1]!.release();
    await tick();
    expect(log).toEqual(['a', 'b', 'c']);
    gates[0]!.release();
    gates[2]!.release();
    gates[3]!.release();
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd']);
    expect([limiter.running, limiter.queued]).toEqual([0, 0]);
  });

  it('refuses a call when the queue is full, without running it', async () => {
    const limiter = new CallLimiter({ maxConcurrent: 1, maxQueue: 1 });
    const log: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((name) => gate(log, name));
    const first = limiter.run(a!.task);
    const second = limiter.run(b!.task);
    const third = limiter.run(c!.task);
    await expect(third).rejects.toThrow(QueueFullError);
    await expect(third).rejects.toThrow('all 1 tool slots are busy and 1 calls are already waiting; the call was not run');
    a!.release();
    b!.release();
    expect([await first, await second]).toEqual(['a', 'b']);
    expect(log).toEqual(['a', 'b']);
  });

  it('with maxQueue 0 refuses as soon as every slot is taken', async () => {
    const limiter = new CallLimiter({ maxConcurrent: 1, maxQueue: 0 });
    const log: string[] = [];
    const a = gate(log, 'a');
    const first = limiter.run(a.task);
    await expect(limiter.run(async () => 'b')).rejects.toThrow(QueueFullError);
    a.release();
    expect(await first).toBe('a');
  });

  it('drops a waiting call whose signal aborts; it never runs and frees its queue place', async () => {
    const limiter = new CallLimiter({ maxConcurrent: 1, maxQueue: 1 });
    const log: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((name) => gate(log, name));
    const first = limiter.run(a!.task);
    const controller = new AbortController();
    const second = limiter.run(b!.task, controller.signal);
    controller.abort(new Error('client went away'));
    await expect(second).rejects.toThrow('client went away');
    expect(limiter.queued).toBe(0);
    const third = limiter.run(c!.task);
    a!.release();
    c!.release();
    expect([await first, await third]).toEqual(['a', 'c']);
    expect(log).toEqual(['a', 'c']);
  });

  it('does not start a call whose signal has already aborted', async () => {
    const limiter = new CallLimiter({ maxConcurrent: 1, maxQueue: 1 });
    let ran = false;
    await expect(limiter.run(async () => (ran = true), AbortSignal.abort(new Error('too late')))).rejects.toThrow('too late');
    expect(ran).toBe(false);
  });

  it('frees the slot when a task fails', async () => {
    const limiter = new CallLimiter({ maxConcurrent: 1, maxQueue: 1 });
    await expect(limiter.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await limiter.run(async () => 'next')).toBe('next');
  });

  it('idle() resolves once nothing runs or waits', async () => {
    const limiter = new CallLimiter({ maxConcurrent: 1, maxQueue: 1 });
    await limiter.idle();
    const log: string[] = [];
    const [a, b] = ['a', 'b'].map((name) => gate(log, name));
    void limiter.run(a!.task);
    void limiter.run(b!.task);
    let idle = false;
    const waiting = limiter.idle().then(() => (idle = true));
    a!.release();
    await tick();
    expect(idle).toBe(false);
    b!.release();
    await waiting;
    expect(idle).toBe(true);
  });

  it('rejects impossible limits', () => {
    expect(() => new CallLimiter({ maxConcurrent: 0, maxQueue: 1 })).toThrow(RangeError);
    expect(() => new CallLimiter({ maxConcurrent: 1, maxQueue: -1 })).toThrow(RangeError);
    expect(() => new CallLimiter({ maxConcurrent: 1.5, maxQueue: 1 })).toThrow(RangeError);
  });
});
