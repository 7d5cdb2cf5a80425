/**
 * `twylt-mcp --http` under load and across replicas, the real command with the SDK's own
 * Streamable HTTP client: the concurrency limit measured from outside (the tools' own start
 * and end times, and the server's children in the process table), the queue-full error,
 * two replicas answering one client's alternate requests, cancellation, and SIGTERM.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SLEEPER, isRunning, sleeperPid, waitFor } from '../support/mcp.js';
import { MCP_HEADERS, childrenOf, lineCount, rawRequest, startHttpBridge, toolsCall, type HttpBridgeProcess } from '../support/mcp-http.js';

const dir = mkdtempSync(join(tmpdir(), 'twylt-mcp-http-load-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SERVE_SLEEPER = ['--', ...SLEEPER];
const BUSY = -32010;

/** The most spans open at one moment, from `start PID MS` / `end PID MS` lines. */
function maxOverlap(spansFile: string): { max: number; spans: number } {
  const events = readFileSync(spansFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [kind, , at] = line.split(' ');
      return { at: Number(at), delta: kind === 'start' ? 1 : -1 };
    })
    // At the same instant, count the start first: the stricter reading.
    .sort((a, b) => a.at - b.at || b.delta - a.delta);
  let open = 0;
  let max = 0;
  for (const { delta } of events) max = Math.max(max, (open += delta));
  return { max, spans: events.filter((event) => event.delta === 1).length };
}

/** Poll the bridge's children every few ms until stopped; the most seen at once. */
function watchChildren(pid: number) {
  let max = 0;
  let polls = 0;
  const timer = setInterval(() => {
    const children = childrenOf(pid);
    if (children === undefined) return;
    polls++;
    max = Math.max(max, children.length);
  }, 3);
  return {
    stop: () => {
      clearInterval(timer);
      return { max, polls };
    },
  };
}

interface Health {
  status: string;
  running: number;
  queued: number;
}

async function health(bridge: HttpBridgeProcess): Promise<Health> {
  return JSON.parse((await rawRequest(`${bridge.base}/healthz`, { method: 'GET' })).body);
}

/** Poll /healthz until `check` holds (10 s at most, then fail). */
async function healthUntil(bridge: HttpBridgeProcess, check: (now: Health) => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (let now = await health(bridge); !check(now); now = await health(bridge)) {
    if (Date.now() > deadline) throw new Error(`gave up waiting on /healthz, last ${JSON.stringify(now)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the concurrency limit', () => {
  it('answers 200 concurrent calls correctly with --max-concurrency 4, never more than 4 tools alive at once', async () => {
    const spans = join(dir, 'load-spans');
    const starts = join(dir, 'load-starts');
    const bridge = await startHttpBridge(['--max-concurrency', '4', '--max-queue', '200', ...SERVE_SLEEPER], { SLEEPER_SPANS: spans, SLEEPER_LOG: starts });
    try {
      const described = lineCount(starts); // the describe at start-up
      rmSync(spans, { force: true });
      const clients = await Promise.all([0, 1, 2, 3].map(() => bridge.connect()));
      const watch = watchChildren(bridge.pid);
      const calls = Array.from({ length: 200 }, (_, i) =>
        clients[i % clients.length]!.callTool({ name: 'sleeper', arguments: { action: 'wait', seconds: 0.1, note: `call-${i}` } }, undefined, { timeout: 120_000 }),
      );
      const results = await Promise.all(calls);
      const seen = watch.stop();
      if (process.env.TWYLT_SHOW_LOAD) console.log({ spans: maxOverlap(spans), children: seen });

      // Every call answered, each with its own result, and each tool run exactly once.
      results.forEach((result, i) => {
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent).toMatchObject({ note: `call-${i}`, tag: '' });
      });
      const pids = results.map((result) => (result.structuredContent as { pid: number }).pid);
      expect(new Set(pids).size).toBe(200);
      expect(lineCount(starts) - described).toBe(200);

      // The tools' own clocks: never more than 4 running, and 4 do run together.
      const overlap = maxOverlap(spans);
      expect(overlap.spans).toBe(200);
      expect(overlap.max).toBeLessThanOrEqual(4);
      expect(overlap.max).toBeGreaterThanOrEqual(3);
      // The process table, from outside: never more than 4 children of the bridge.
      if (seen.polls > 0) {
        expect(seen.max).toBeLessThanOrEqual(4);
        expect(seen.max).toBe(4);
      }
      // A log line can reach us after its call's answer.
      const ok = () => bridge.events().filter((event) => event.event === 'call' && event.outcome === 'ok');
      await waitFor(() => ok().length >= 200, '200 call log lines');
      expect(ok()).toHaveLength(200);
      expect(await health(bridge)).toEqual({ status: 'ok', running: 0, queued: 0 });
    } finally {
      await bridge.stop();
    }
  });

  it('the same measures do see more than 4 when the limit allows it (so they can fail)', async () => {
    const spans = join(dir, 'wide-spans');
    const release = join(dir, 'wide-release');
    const bridge = await startHttpBridge(['--max-concurrency', '8', ...SERVE_SLEEPER], { SLEEPER_SPANS: spans });
    try {
      rmSync(spans, { force: true });
      const client = await bridge.connect();
      const watch = watchChildren(bridge.pid);
      const calls = Array.from({ length: 8 }, (_, i) => client.callTool({ name: 'sleeper', arguments: { action: 'wait', release_file: release, note: `${i}` } }));
      await waitFor(() => (existsSync(spans) ? readFileSync(spans, 'utf8').split('\n').filter((line) => line.startsWith('start')).length === 8 : false), '8 tools to start', 30_000);
      writeFileSync(release, '');
      await Promise.all(calls);
      const seen = watch.stop();
      expect(maxOverlap(spans).max).toBe(8);
      if (seen.polls > 0) expect(seen.max).toBe(8);
    } finally {
      await bridge.stop();
    }
  });

  it('refuses a call with the documented JSON-RPC error when the queue is full; nothing is lost or run twice', async () => {
    const starts = join(dir, 'full-starts');
    const release = join(dir, 'full-release');
    const running = join(dir, 'full-running.pid');
    const bridge = await startHttpBridge(['--max-concurrency', '1', '--max-queue', '1', ...SERVE_SLEEPER], { SLEEPER_LOG: starts });
    try {
      const described = lineCount(starts);
      const client = await bridge.connect();
      const first = client.callTool({ name: 'sleeper', arguments: { action: 'wait', release_file: release, pid_file: running, note: 'first' } });
      await waitFor(() => existsSync(running), 'the first call to run');
      const second = client.callTool({ name: 'sleeper', arguments: { action: 'wait', note: 'second' } });
      await healthUntil(bridge, (now) => now.queued === 1);
      expect(await health(bridge)).toEqual({ status: 'ok', running: 1, queued: 1 });

      const third = client.callTool({ name: 'sleeper', arguments: { action: 'wait', note: 'third' } });
      await expect(third).rejects.toMatchObject({
        code: BUSY,
        message: expect.stringContaining('twylt-mcp is busy: all 1 tool slots are busy and 1 calls are already waiting; the call was not run, retry later'),
        data: { maxConcurrency: 1, maxQueue: 1 },
      });
      writeFileSync(release, '');
      expect((await first).structuredContent).toMatchObject({ note: 'first' });
      expect((await second).structuredContent).toMatchObject({ note: 'second' });
      expect(lineCount(starts) - described).toBe(2);
      const logged = () => bridge.events().filter((event) => event.event === 'call');
      await waitFor(() => logged().length >= 3, 'three call log lines');
      const outcomes = logged().map((event) => event.outcome);
      expect(outcomes.sort()).toEqual(['busy', 'ok', 'ok']);
    } finally {
      await bridge.stop();
    }
  });
});

describe('stateless: replicas', () => {
  it('two server processes answer alternate requests of one client, and one can go away', async () => {
    const replicas = await Promise.all(['A', 'B'].map((tag) => startHttpBridge(SERVE_SLEEPER, { SLEEPER_TAG: tag })));
    const [a, b] = replicas as [HttpBridgeProcess, HttpBridgeProcess];
    try {
      // A round-robin load balancer in one function: each POST goes to the next replica.
      let next = 0;
      let targets = [a, b];
      const answeredBy: string[] = [];
      const roundRobin: typeof fetch = (input, init) => {
        const replica = init?.method === 'POST' ? targets[next++ % targets.length]! : a;
        if (init?.method === 'POST') answeredBy.push(replica === a ? 'A' : 'B');
        return fetch(new URL(new URL(String(input)).pathname, replica.base), init);
      };
      const client = await a.connect({ fetch: roundRobin });
      // initialize went to A, notifications/initialized to B.
      expect(answeredBy).toEqual(['A', 'B']);

      const tags: string[] = [];
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['sleeper']); // A
      for (let i = 0; i < 4; i++) {
        const result = await client.callTool({ name: 'sleeper', arguments: { action: 'wait', note: `n${i}` } });
        expect(result.structuredContent).toMatchObject({ note: `n${i}` });
        tags.push((result.structuredContent as { tag: string }).tag);
      }
      expect(tags).toEqual(['B', 'A', 'B', 'A']);
      expect(answeredBy).toEqual(['A', 'B', 'A', 'B', 'A', 'B', 'A']);
      for (const replica of replicas) expect(replica.events().filter((event) => event.event === 'call')).toHaveLength(2);

      // A goes away; the same client, never re-initialized, goes on with B alone.
      a.child.kill('SIGTERM');
      expect((await a.exited).code).toBe(143);
      targets = [b];
      const after = await client.callTool({ name: 'sleeper', arguments: { action: 'wait', note: 'after' } });
      expect(after.structuredContent).toMatchObject({ note: 'after', tag: 'B' });
    } finally {
      await Promise.all(replicas.map((replica) => replica.stop()));
    }
  });
});

describe('cancellation', () => {
  it('a call the client cancels (notifications/cancelled) kills its tool', async () => {
    const bridge = await startHttpBridge(SERVE_SLEEPER);
    try {
      const client = await bridge.connect();
      const pidFile = join(dir, 'cancel.pid');
      const controller = new AbortController();
      const pending = client.callTool({ name: 'sleeper', arguments: { action: 'wait', pid_file: pidFile, release_file: join(dir, 'never') } }, undefined, {
        signal: controller.signal,
      });
      const pid = await sleeperPid(pidFile);
      expect(isRunning(pid)).toBe(true);
      controller.abort('changed my mind');
      await expect(pending).rejects.toThrow();
      await waitFor(() => !isRunning(pid), `process ${pid} to end`);
      await waitFor(() => bridge.events().some((event) => event.event === 'call'), 'the call to be logged');
      expect(bridge.events().find((event) => event.event === 'call')).toMatchObject({ outcome: 'cancelled' });
      expect((await client.callTool({ name: 'sleeper', arguments: { action: 'wait', note: 'after' } })).structuredContent).toMatchObject({ note: 'after' });
      expect(await health(bridge)).toMatchObject({ running: 0, queued: 0 });
    } finally {
      await bridge.stop();
    }
  });

  it('a client that goes away (connection closed) has its tool killed', async () => {
    const bridge = await startHttpBridge(SERVE_SLEEPER);
    try {
      const pidFile = join(dir, 'gone.pid');
      const controller = new AbortController();
      // No session id: only the closed connection can tell the server.
      const pending = fetch(bridge.url, {
        method: 'POST',
        headers: MCP_HEADERS,
        body: toolsCall(1, 'sleeper', { action: 'wait', pid_file: pidFile, release_file: join(dir, 'never') }),
        signal: controller.signal,
      }).then((response) => response.text());
      const pid = await sleeperPid(pidFile);
      controller.abort();
      await expect(pending).rejects.toThrow();
      await waitFor(() => !isRunning(pid), `process ${pid} to end`);

      // The same with the SDK client: closing it closes its connections.
      const client = await bridge.connect();
      const sdkPid = join(dir, 'gone-sdk.pid');
      const call = client.callTool({ name: 'sleeper', arguments: { action: 'wait', pid_file: sdkPid, release_file: join(dir, 'never') } });
      await waitFor(() => existsSync(sdkPid), 'the SDK call to start');
      const second = Number(readFileSync(sdkPid, 'utf8'));
      await client.close();
      await expect(call).rejects.toThrow();
      await waitFor(() => !isRunning(second), `process ${second} to end`);
    } finally {
      await bridge.stop();
    }
  });

  it('a queued call that is cancelled never runs', async () => {
    const starts = join(dir, 'queued-starts');
    const release = join(dir, 'queued-release');
    const running = join(dir, 'queued-running.pid');
    const bridge = await startHttpBridge(['--max-concurrency', '1', ...SERVE_SLEEPER], { SLEEPER_LOG: starts });
    try {
      const described = lineCount(starts);
      const client = await bridge.connect();
      const first = client.callTool({ name: 'sleeper', arguments: { action: 'wait', release_file: release, pid_file: running } });
      await waitFor(() => existsSync(running), 'the first call to run');
      const controller = new AbortController();
      const queued = client.callTool({ name: 'sleeper', arguments: { action: 'wait', note: 'queued' } }, undefined, { signal: controller.signal });
      await healthUntil(bridge, (now) => now.queued === 1);
      controller.abort();
      await expect(queued).rejects.toThrow();
      await healthUntil(bridge, (now) => now.queued === 0);
      expect(await health(bridge)).toMatchObject({ running: 1, queued: 0 });
      writeFileSync(release, '');
      await first;
      expect(lineCount(starts) - described).toBe(1);
    } finally {
      await bridge.stop();
    }
  });
});

describe('SIGTERM', () => {
  it('stops accepting, lets the calls in flight finish, then exits 143', async () => {
    const release = join(dir, 'term-release');
    const pids = [join(dir, 'term-a.pid'), join(dir, 'term-b.pid')];
    const bridge = await startHttpBridge(SERVE_SLEEPER);
    const client = await bridge.connect();
    const calls = pids.map((pidFile, i) => client.callTool({ name: 'sleeper', arguments: { action: 'wait', pid_file: pidFile, release_file: release, note: `t${i}` } }));
    await waitFor(() => pids.every((file) => existsSync(file)), 'both calls to start');
    bridge.child.kill('SIGTERM');
    await waitFor(() => bridge.events().some((event) => event.event === 'draining'), 'the bridge to start draining');
    // No new connections: the port is closed.
    await expect(rawRequest(`${bridge.base}/healthz`, { method: 'GET' })).rejects.toThrow(/ECONNREFUSED/);
    writeFileSync(release, '');
    const results = await Promise.all(calls);
    expect(results.map((result) => result.structuredContent)).toEqual([
      expect.objectContaining({ note: 't0' }),
      expect.objectContaining({ note: 't1' }),
    ]);
    expect(await bridge.exited).toEqual({ code: 143, signal: null });
    expect(bridge.events().map((event) => event.event)).toEqual(['draining', 'call', 'call', 'stopped']);
  });

  it('after --grace-ms, kills the calls still running and exits', async () => {
    const pidFile = join(dir, 'grace.pid');
    const bridge = await startHttpBridge(['--grace-ms', '300', ...SERVE_SLEEPER]);
    const client = await bridge.connect();
    const call = client.callTool({ name: 'sleeper', arguments: { action: 'wait', pid_file: pidFile, release_file: join(dir, 'never') } }, undefined, { timeout: 30_000 });
    call.catch(() => {});
    const pid = await sleeperPid(pidFile);
    const signalled = Date.now();
    bridge.child.kill('SIGTERM');
    expect(await bridge.exited).toEqual({ code: 143, signal: null });
    expect(Date.now() - signalled).toBeLessThan(10_000);
    expect(isRunning(pid)).toBe(false);
    expect(bridge.events().map((event) => event.event)).toEqual(['draining', 'grace_over', 'call', 'stopped']);
    expect(bridge.events().find((event) => event.event === 'call')).toMatchObject({ outcome: 'cancelled' });
    await client.close();
  });
});
