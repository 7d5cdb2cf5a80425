/**
 * Replicas of `twylt-mcp --http` behind a real nginx (Debian's package, started by the test on
 * 127.0.0.1 with the configuration docs/mcp.md shows), driven by the MCP SDK's own client:
 * calls spread round-robin, a replica stopped (SIGTERM) or killed (SIGKILL) mid-run,
 * cancellation with and without session affinity. Set TWYLT_SHOW_NGINX=1 to print the
 * measured times that docs/mcp.md quotes.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, describe, expect, it } from 'vitest';
import { SLEEPER, isRunning, sleeperPid, waitFor } from '../support/mcp.js';
import { MCP_HEADERS, childrenOf, rawRequest, startHttpBridge, toolsCall, type HttpBridgeProcess } from '../support/mcp-http.js';
import { HAS_NGINX, NO_NGINX_REASON, docNginxConfig, freePort, startNginx, type Nginx } from '../support/nginx.js';

const dir = mkdtempSync(join(tmpdir(), 'twylt-mcp-nginx-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOKEN = 'nginx-test-token-0123456789';
const show = (what: string, value: unknown) => {
  if (process.env.TWYLT_SHOW_NGINX) console.log(`${what}: ${JSON.stringify(value)}`);
};

interface Farm {
  nginx: Nginx;
  replicas: HttpBridgeProcess[];
  /** An SDK client that talks to nginx, with the token. */
  connect(): Promise<Client>;
  /** The replica a tool process runs under (its parent). */
  replicaOf(toolPid: number): HttpBridgeProcess | undefined;
  stop(): Promise<void>;
}

/**
 * Two replicas (tagged A and B, with the token, accepting only nginx's Host) behind nginx
 * running the documented configuration; `roundRobin` drops its affinity line.
 */
async function startFarm(options: { roundRobin?: boolean; args?: string[]; env?: Record<string, string>; replaceInConfig?: [string, string] } = {}): Promise<Farm> {
  const port = await freePort();
  const replicas = await Promise.all(
    ['A', 'B'].map((tag) =>
      startHttpBridge(['--allow-host', `127.0.0.1:${port}`, ...(options.args ?? []), '--', ...SLEEPER], { TWYLT_MCP_TOKEN: TOKEN, SLEEPER_TAG: tag, ...options.env }),
    ),
  );
  let config = docNginxConfig({ port, replicas: replicas.map((replica) => new URL(replica.base).host), roundRobin: options.roundRobin });
  if (options.replaceInConfig) config = config.replace(...options.replaceInConfig);
  const nginx = await startNginx(config, port).catch(async (error: unknown) => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    throw error;
  });
  const clients: Client[] = [];
  return {
    nginx,
    replicas,
    async connect() {
      const transport = new StreamableHTTPClientTransport(new URL(`${nginx.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
      const client = new Client({ name: 'twylt-nginx-tests', version: '0.0.0' });
      await client.connect(transport);
      clients.push(client);
      return client;
    },
    replicaOf: (toolPid) => replicas.find((replica) => childrenOf(replica.pid)?.includes(toolPid)),
    async stop() {
      await Promise.all(clients.map((client) => client.close().catch(() => {})));
      await nginx.stop();
      await Promise.all(replicas.map((replica) => replica.stop()));
    },
  };
}

/** The notes the sleeper recorded (one line per run). */
function notes(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

const never = () => join(dir, 'never');
/** Hundreds of tool processes on a loaded 2-core machine. */
const SLOW = { timeout: 180_000 };

describe.skipIf(!HAS_NGINX)(HAS_NGINX ? 'nginx in front of two replicas' : `skipped: ${NO_NGINX_REASON}`, () => {
  it('the documented configuration, as written: Host with its port passes, affinity keeps a client on one replica, a body above 4m is refused', async () => {
    const farm = await startFarm();
    try {
      const client = await farm.connect();
      const results = [];
      for (let i = 0; i < 6; i++) results.push(await client.callTool({ name: 'sleeper', arguments: { action: 'wait', note: `doc-${i}` } }));
      results.forEach((result, i) => expect(result.structuredContent).toMatchObject({ note: `doc-${i}` }));
      // Every call of this client ran on one replica: the hash on its Mcp-Session-Id.
      expect(new Set(results.map((result) => (result.structuredContent as { tag: string }).tag)).size).toBe(1);
      // `initialize` carries no session id yet (round-robin); every later request is hashed.
      const upstreams = farm.nginx.access().map((line) => line.upstream);
      expect(new Set(upstreams.slice(1)).size).toBe(1);

      const big = await rawRequest(`${farm.nginx.base}/mcp`, {
        headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` },
        body: toolsCall(1, 'sleeper', { action: 'wait', note: 'x'.repeat(4 * 1024 * 1024 + 1) }),
      });
      expect(big.status).toBe(413);
    } finally {
      await farm.stop();
    }
  });

  it('with `Host $host` instead (the old example), the port is lost and every request is refused (so the test above can fail)', async () => {
    const farm = await startFarm({ replaceInConfig: ['proxy_set_header Host $http_host;', 'proxy_set_header Host $host;'] });
    try {
      await expect(farm.connect()).rejects.toThrow(/403|not one of this server's names/);
    } finally {
      await farm.stop();
    }
  });

  it('300 calls round-robin from 4 clients: none wrong, lost or run twice, both replicas used', SLOW, async () => {
    const file = join(dir, 'rr-notes');
    const farm = await startFarm({ roundRobin: true, args: ['--max-concurrency', '4', '--max-queue', '300'], env: { SLEEPER_NOTES: file } });
    try {
      const clients = await Promise.all([0, 1, 2, 3].map(() => farm.connect()));
      const started = Date.now();
      const results = await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          clients[i % 4]!.callTool({ name: 'sleeper', arguments: { action: 'wait', seconds: 0.02, note: `call-${i}` } }, undefined, { timeout: 120_000 }),
        ),
      );
      show('300 calls round-robin, ms', Date.now() - started);
      results.forEach((result, i) => {
        expect(result.isError).toBeFalsy();
        expect(result.structuredContent).toMatchObject({ note: `call-${i}` });
      });
      expect(notes(file).sort()).toEqual(Array.from({ length: 300 }, (_, i) => `call-${i}`).sort());
      const tags = results.map((result) => (result.structuredContent as { tag: string }).tag);
      for (const tag of ['A', 'B']) expect(tags.filter((each) => each === tag).length).toBeGreaterThan(100);
      expect(farm.nginx.access().filter((line) => line.status >= 500)).toEqual([]);
    } finally {
      await farm.stop();
    }
  });

  it('SIGTERM of a replica mid-run: every call is answered, by one replica or the other, once', SLOW, async () => {
    const file = join(dir, 'term-notes');
    const farm = await startFarm({ roundRobin: true, args: ['--max-concurrency', '4', '--max-queue', '300'], env: { SLEEPER_NOTES: file } });
    try {
      const clients = await Promise.all([0, 1, 2, 3].map(() => farm.connect()));
      const [a] = farm.replicas as [HttpBridgeProcess, HttpBridgeProcess];
      // Each client calls one after another, so that calls keep arriving while A drains.
      const results: Awaited<ReturnType<Client['callTool']>>[] = [];
      const calls = clients.map(async (client, c) => {
        for (let i = c; i < 200; i += 4) {
          results[i] = await client.callTool({ name: 'sleeper', arguments: { action: 'wait', seconds: 0.05, note: `term-${i}` } }, undefined, { timeout: 120_000 });
        }
      });
      await waitFor(() => notes(file).length >= 40, '40 calls to run', 60_000);
      a.child.kill('SIGTERM');
      await Promise.all(calls);
      results.forEach((result, i) => expect(result.structuredContent).toMatchObject({ note: `term-${i}` }));
      expect(notes(file).sort()).toEqual(Array.from({ length: 200 }, (_, i) => `term-${i}`).sort());
      expect((await a.exited).code).toBe(143);
      // Both replicas did part of the work; A stopped taking calls once it drained.
      const tags = results.map((result) => (result.structuredContent as { tag: string }).tag);
      show('SIGTERM mid-run: calls answered by A, B', [tags.filter((tag) => tag === 'A').length, tags.filter((tag) => tag === 'B').length]);
      expect(tags).toContain('A');
      expect(tags).toContain('B');
      expect(farm.nginx.access().filter((line) => line.status >= 500)).toEqual([]);
    } finally {
      await farm.stop();
    }
  });

  it('SIGKILL of a replica with calls in flight: its tools are gone within a second, its callers get 502 at once, the other replica finishes its calls', async () => {
    const release = join(dir, 'kill-release');
    const farm = await startFarm({ roundRobin: true });
    try {
      const client = await farm.connect();
      const pidFiles = Array.from({ length: 4 }, (_, i) => join(dir, `kill-${i}.pid`));
      const settled: Array<{ ok: boolean; error?: string; at: number }> = [];
      const calls = pidFiles.map((pidFile, i) =>
        client
          .callTool({ name: 'sleeper', arguments: { action: 'wait', pid_file: pidFile, release_file: release, note: `kill-${i}` } }, undefined, { timeout: 60_000 })
          .then(
            () => (settled[i] = { ok: true, at: Date.now() }),
            (error: Error) => (settled[i] = { ok: false, error: error.message, at: Date.now() }),
          ),
      );
      const pids = await Promise.all(pidFiles.map(sleeperPid));
      const [a, b] = farm.replicas as [HttpBridgeProcess, HttpBridgeProcess];
      const onA = pids.filter((pid) => farm.replicaOf(pid) === a);
      const onB = pids.filter((pid) => farm.replicaOf(pid) === b);
      expect(onA.length).toBeGreaterThan(0);
      expect(onB.length).toBeGreaterThan(0);

      const killed = Date.now();
      a.child.kill('SIGKILL');
      // The keeper (ADR 0029) ends A's tools with A.
      await waitFor(() => onA.every((pid) => !isRunning(pid)), "A's tools to end", 1000);
      show("SIGKILL: A's tools gone after, ms", Date.now() - killed);
      // A's callers are told: nginx answers 502, since A had sent no status line yet.
      const aCalls = pids.map((pid, i) => (onA.includes(pid) ? i : -1)).filter((i) => i >= 0);
      await waitFor(() => aCalls.every((i) => settled[i] !== undefined), "A's calls to fail", 5000);
      show("SIGKILL: A's callers told after, ms", Math.max(...aCalls.map((i) => settled[i]!.at - killed)));
      for (const i of aCalls) expect(settled[i]).toMatchObject({ ok: false, error: expect.stringContaining('502 Bad Gateway') });
      expect(onB.every(isRunning)).toBe(true);

      writeFileSync(release, '');
      await Promise.all(calls);
      pids.forEach((pid, i) => {
        if (onB.includes(pid)) expect(settled[i]).toMatchObject({ ok: true });
      });
      expect(farm.nginx.access().filter((line) => line.status === 502)).toHaveLength(aCalls.length);
    } finally {
      await farm.stop();
    }
  });

  it('with affinity, a cancelled call has its tool killed within a second, on whichever replica it runs', async () => {
    const farm = await startFarm();
    try {
      // Six clients: their session ids hash to both replicas but in rare runs.
      const clients = await Promise.all([0, 1, 2, 3, 4, 5].map(() => farm.connect()));
      const ran = new Set<string>();
      const times: number[] = [];
      for (const [i, client] of clients.entries()) {
        const pidFile = join(dir, `affinity-${i}.pid`);
        const controller = new AbortController();
        const call = client.callTool({ name: 'sleeper', arguments: { action: 'wait', pid_file: pidFile, release_file: never() } }, undefined, { signal: controller.signal });
        const pid = await sleeperPid(pidFile);
        ran.add(farm.replicaOf(pid) === farm.replicas[0] ? 'A' : 'B');
        const aborted = Date.now();
        controller.abort();
        await expect(call).rejects.toThrow();
        await waitFor(() => !isRunning(pid), `tool ${pid} to end after its cancel`, 1000);
        times.push(Date.now() - aborted);
      }
      show('affinity: cancel to tool gone, ms', times);
      show('affinity: replicas that ran the cancelled calls', [...ran]);
    } finally {
      await farm.stop();
    }
  });

  it('without affinity, a cancel lands on the other replica: the tool runs on until the call time-out ends it', async () => {
    const farm = await startFarm({ roundRobin: true, args: ['--timeout', '3000'] });
    try {
      const client = await farm.connect();
      const pidFile = join(dir, 'rr-cancel.pid');
      const controller = new AbortController();
      const call = client.callTool({ name: 'sleeper', arguments: { action: 'wait', pid_file: pidFile, release_file: never() } }, undefined, { signal: controller.signal });
      const pid = await sleeperPid(pidFile);
      const started = Date.now();
      const replica = farm.replicaOf(pid)!;
      controller.abort();
      await expect(call).rejects.toThrow();
      // The cancel went to the other replica (202, nothing to cancel there)...
      const cancelTo = () => farm.nginx.access().filter((line) => line.status === 202).at(-1)?.upstream;
      await waitFor(() => farm.nginx.access().filter((line) => line.status === 202).length >= 2, 'the cancel to be logged');
      expect(cancelTo()).not.toBe(new URL(replica.base).host);
      // ...so the tool goes on, and the call time-out (--timeout 3000) ends it.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(isRunning(pid)).toBe(true);
      await waitFor(() => !isRunning(pid), 'the call time-out to end the tool', 15_000);
      show('no affinity: tool ran after the cancel, ms', Date.now() - started);
      await waitFor(() => replica.events().some((event) => event.event === 'call'), 'the call to be logged');
      expect(replica.events().find((event) => event.event === 'call')).toMatchObject({ outcome: 'timeout' });
    } finally {
      await farm.stop();
    }
  });

  it('without affinity, a client that closes the request connection ends its call through nginx within a second', async () => {
    const farm = await startFarm({ roundRobin: true });
    try {
      const pidFile = join(dir, 'rr-close.pid');
      const controller = new AbortController();
      const pending = fetch(`${farm.nginx.base}/mcp`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` },
        body: toolsCall(1, 'sleeper', { action: 'wait', pid_file: pidFile, release_file: never() }),
        signal: controller.signal,
      }).then((response) => response.text());
      const pid = await sleeperPid(pidFile);
      const aborted = Date.now();
      controller.abort();
      await expect(pending).rejects.toThrow();
      await waitFor(() => !isRunning(pid), 'the tool to end after its connection closed', 1000);
      show('closed connection through nginx to tool gone, ms', Date.now() - aborted);
      // nginx logs 499: the client closed the request first.
      await waitFor(() => farm.nginx.access().some((line) => line.status === 499), 'nginx to log 499');
    } finally {
      await farm.stop();
    }
  });
});
