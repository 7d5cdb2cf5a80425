/**
 * What a draining `twylt-mcp --http` does with requests that reach it after SIGTERM on
 * connections it had already accepted: a connection's first request (sent before the port
 * closed, as by a proxy that opens a connection per request) is served; /healthz says
 * `draining` (503); the next request on a kept connection is refused with 503. Raw sockets,
 * to hold a connection open unused.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SLEEPER, sleeperPid, waitFor } from '../support/mcp.js';
import { sseMessages, startHttpBridge, toolsCall } from '../support/mcp-http.js';

const dir = mkdtempSync(join(tmpdir(), 'twylt-mcp-drain-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A socket to `base` and the text it has received so far. */
async function openSocket(base: string): Promise<{ socket: Socket; received: () => string; ended: Promise<void> }> {
  const { hostname, port } = new URL(base);
  const socket = createConnection({ host: hostname, port: Number(port) });
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, received: () => text, ended };
}

/** One POST to /mcp, written by hand (keep-alive, as HTTP/1.1 has it by default). */
function post(base: string, body: string): string {
  return `POST /mcp HTTP/1.1\r\nHost: ${new URL(base).host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** Open file descriptors of a process (Linux). */
const fds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

describe.skipIf(!existsSync('/proc'))('draining (Linux: /proc tells when the bridge has accepted a connection)', () => {
  it("serves a connection's first request that arrives after SIGTERM, and refuses a kept connection's next one with 503", async () => {
    const release = join(dir, 'release');
    const pidFile = join(dir, 'long.pid');
    const bridge = await startHttpBridge(['--', ...SLEEPER]);
    // A call in flight keeps the bridge draining while the test speaks.
    const client = await bridge.connect();
    const long = client.callTool({ name: 'sleeper', arguments: { action: 'wait', pid_file: pidFile, release_file: release, note: 'long' } });
    await sleeperPid(pidFile);

    // A kept connection: one request answered, the connection left open.
    const kept = await openSocket(bridge.base);
    kept.socket.write(post(bridge.base, toolsCall(1, 'sleeper', { action: 'wait', note: 'before' })));
    await waitFor(() => kept.received().endsWith('\r\n0\r\n\r\n'), 'the first answer on the kept connection');
    expect(kept.received()).toMatch(/^HTTP\/1\.1 200 /);

    // A connection accepted by the bridge, nothing sent on it yet.
    const before = fds(bridge.pid);
    const fresh = await openSocket(bridge.base);
    await waitFor(() => fds(bridge.pid) > before, 'the bridge to accept the connection');

    bridge.child.kill('SIGTERM');
    await waitFor(() => bridge.events().some((event) => event.event === 'draining'), 'the bridge to start draining');

    fresh.socket.write(post(bridge.base, toolsCall(2, 'sleeper', { action: 'wait', note: 'fresh' })));
    await waitFor(() => fresh.received().endsWith('\r\n0\r\n\r\n'), 'the answer on the fresh connection');
    expect(fresh.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(sseMessages(fresh.received())).toEqual([expect.objectContaining({ id: 2, result: expect.objectContaining({ structuredContent: expect.objectContaining({ note: 'fresh' }) }) })]);

    // The health check on a connection still open says so.
    const answeredCall = kept.received().length;
    kept.socket.write(`GET /healthz HTTP/1.1\r\nHost: ${new URL(bridge.base).host}\r\n\r\n`);
    await waitFor(() => kept.received().slice(answeredCall).includes('"status":"draining"'), '/healthz to answer');
    expect(kept.received().slice(answeredCall)).toMatch(/^HTTP\/1\.1 503 /);

    const answered = kept.received().length;
    kept.socket.write(post(bridge.base, toolsCall(3, 'sleeper', { action: 'wait', note: 'after' })));
    await kept.ended;
    const refusal = kept.received().slice(answered);
    expect(refusal).toMatch(/^HTTP\/1\.1 503 /);
    expect(refusal).toContain('twylt-mcp is shutting down; the request was not run, retry');

    writeFileSync(release, '');
    expect((await long).structuredContent).toMatchObject({ note: 'long' });
    expect(await bridge.exited).toEqual({ code: 143, signal: null });
    expect(bridge.events().filter((event) => event.event === 'call').map((event) => event.outcome)).toEqual(['ok', 'ok', 'ok']);
  });
});
