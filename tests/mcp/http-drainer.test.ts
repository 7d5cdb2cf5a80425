/**
 * The drain of `twylt-mcp --http` ends when its last exchange does (issue 35: told by the
 * exchange's end, no polling), not when the grace runs out: the Drainer itself, and a bridge
 * whose one call ends 60 s before its grace would. Nor before a request it had accepted is
 * answered: a connection accepted before SIGTERM whose request comes after the last call.
 */
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Drainer } from '../../packages/twylt-mcp/src/http/drain.js';
import { SLEEPER, sleeperPid, waitFor } from '../support/mcp.js';
import { MCP_HEADERS, startHttpBridge } from '../support/mcp-http.js';

const dir = mkdtempSync(join(tmpdir(), 'twylt-mcp-drainer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const exchange = () => ({ closed: 0, close() { this.closed += 1; }, cancel() {} });

describe('Drainer', () => {
  it('is idle at once with no exchange, and once the last of several ends', async () => {
    const drainer = new Drainer();
    await drainer.idle();
    const [a, b] = [exchange(), exchange()];
    drainer.add(a);
    drainer.add(b);
    let idle = false;
    const waiting = drainer.idle().then(() => (idle = true));
    drainer.delete(a);
    await Promise.resolve();
    expect(idle).toBe(false);
    drainer.delete(b);
    await waiting;
    expect(idle).toBe(true);
  });

  it('draining is set once, and closeAll aborts every exchange in progress', () => {
    const drainer = new Drainer();
    expect(drainer.draining).toBe(false);
    drainer.start();
    expect(drainer.draining).toBe(true);
    const [a, b] = [exchange(), exchange()];
    drainer.add(a);
    drainer.add(b);
    drainer.closeAll();
    expect([a.closed, b.closed]).toEqual([1, 1]);
  });
});

describe('twylt-mcp --http on SIGTERM', () => {
  /** A bridge with a 60 s grace and one call running until `release()`; `terminate()` sends SIGTERM and waits for the drain to start. */
  async function bridgeWithLongCall(name: string) {
    const releaseFile = join(dir, `${name}.release`);
    const pidFile = join(dir, `${name}.pid`);
    const bridge = await startHttpBridge(['--grace-ms', '60000', '--', ...SLEEPER]);
    const client = await bridge.connect();
    const long = client.callTool({ name: 'sleeper', arguments: { action: 'wait', pid_file: pidFile, release_file: releaseFile, note: 'long' } });
    await sleeperPid(pidFile);
    return {
      bridge,
      long,
      release: () => writeFileSync(releaseFile, ''),
      terminate: async () => {
        bridge.child.kill('SIGTERM');
        await waitFor(() => bridge.events().some((event) => event.event === 'draining'), 'the bridge to start draining');
      },
    };
  }

  it('stops as soon as its last call is answered, long before its grace is over', async () => {
    const { bridge, long, release, terminate } = await bridgeWithLongCall('long');
    await terminate();
    const released = Date.now();
    release();
    expect((await long).structuredContent).toMatchObject({ note: 'long' });
    expect(await bridge.exited).toEqual({ code: 143, signal: null });
    expect(Date.now() - released).toBeLessThan(15_000);
    expect(bridge.events().map((event) => event.event)).not.toContain('grace_over');
  }, 90_000);

  it('a connection it accepted before SIGTERM has its request answered, even one that comes after the last call ended', async () => {
    const { bridge, long, release, terminate } = await bridgeWithLongCall('late');
    const { port } = new URL(bridge.url);
    const late = connect({ host: '127.0.0.1', port: Number(port) });
    let answer = '';
    late.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    const ended = new Promise<void>((resolve) => late.once('close', () => resolve()));
    late.on('error', () => {});
    await new Promise<void>((resolve) => late.once('connect', () => resolve()));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    late.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    // Accepted by the bridge itself, not only queued by the kernel: one of its descriptors is that connection.
    await waitFor(() => acceptedBy(bridge.pid, Number(port), late.localPort!), 'the bridge to accept the connection');
    await terminate();
    release();
    expect((await long).structuredContent).toMatchObject({ note: 'long' });
    // The last call has ended: a drain that waited for it alone would close this connection now.
    const headers = Object.entries({ ...MCP_HEADERS, 'content-length': String(Buffer.byteLength(body)), connection: 'close' }).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    late.write(`${headers}\r\n${body}`);
    await ended;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain('"sleeper"');
    expect(await bridge.exited).toEqual({ code: 143, signal: null });
  }, 90_000);
});


/** Whether process `pid` holds the server side of the TCP connection 127.0.0.1:`port` <- 127.0.0.1:`peer` (accept(2) has returned it). */
function acceptedBy(pid: number, port: number, peer: number): boolean {
  const hex = (value: number) => value.toString(16).toUpperCase().padStart(4, '0');
  const row = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find((fields) => fields[1] === `0100007F:${hex(port)}` && fields[2] === `0100007F:${hex(peer)}`);
  const inode = row?.[9];
  if (!inode || inode === '0') return false;
  return readdirSync(`/proc/${pid}/fd`).some((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`;
    } catch {
      return false;
    }
  });
}
