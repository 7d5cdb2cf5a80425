/**
 * The relay of relay.ts run in this process (docs/mutation.md): inside a sandbox it offers
 * the proxy's Unix socket on 127.0.0.1:PORT, runs the tool, and ends as the tool ends (its
 * exit code, its signal, 127 when it cannot start). Here the settings come from a last
 * argument pushed on process.argv, and process.exit and process.kill are stubbed: the relay
 * would end this process otherwise. The relay inside a real sandbox is tested end to end
 * (sandbox.test.ts, netpolicy.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { relayMain, type RelaySettings } from '../../packages/twylt/src/toolset/sandbox/relay.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-relay-unit-'));
const socket = join(scratch, 'proxy.sock');
let proxy: Server;
/** The proxy's side of each connection the relay made. */
const proxied: import('node:net').Socket[] = [];
const net = process.getBuiltinModule('node:net');

beforeAll(async () => {
  // The proxy's stand-in: answers each connection's bytes with `proxy:` before them.
  proxy = createServer((client) => {
    proxied.push(client);
    client.on('error', () => {});
    client.on('data', (data) => client.write(`proxy:${data}`));
  });
  await new Promise<void>((done) => proxy.listen(socket, done));
});
afterAll(() => {
  proxy.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A port free now on 127.0.0.1. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

const servers: Server[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const server of servers.splice(0)) server.close();
});

/** Run the relay with these settings; resolves with what it ended with (process.exit's code) and its server. */
async function relay(settings: RelaySettings): Promise<{ code: unknown; server: Server; kill: ReturnType<typeof vi.fn> }> {
  const createServerOriginal = net.createServer;
  let server: Server | undefined;
  vi.spyOn(net, 'createServer').mockImplementation(((listener: (socket: import('node:net').Socket) => void) => {
    server = createServerOriginal(listener);
    servers.push(server);
    return server;
  }) as typeof net.createServer);
  const kill = vi.fn(() => true);
  vi.spyOn(process, 'kill').mockImplementation(kill as unknown as typeof process.kill);
  const exited = new Promise<unknown>((done) => vi.spyOn(process, 'exit').mockImplementation(((code: unknown) => done(code)) as typeof process.exit));
  const argv = process.argv;
  process.argv = [...argv, JSON.stringify(settings)];
  try {
    relayMain();
  } finally {
    process.argv = argv;
  }
  const code = await exited;
  return { code, server: server!, kill };
}

/** Bytes sent to the relay's port and what came back before it closed or `timeout` ms. */
function through(port: number, text: string): Promise<string> {
  return new Promise((done) => {
    const client = net.connect(port, '127.0.0.1');
    let answer = '';
    client.on('data', (data) => {
      answer += data.toString();
      if (answer.length >= `proxy:${text}`.length) client.destroy();
    });
    client.on('error', () => {});
    client.on('close', () => done(answer));
    client.write(text);
  });
}

describe('the relay', () => {
  it("listens on 127.0.0.1 at the settings' port, passes a connection's bytes to the proxy's socket and back, and ends with the tool's exit code", async () => {
    const port = await freePort();
    const { code, server, kill } = await relay({ socket, port, command: ['/bin/sh', '-c', 'exit 7'] });
    expect(code).toBe(7);
    expect(kill).not.toHaveBeenCalled();
    expect(server.address()).toEqual({ address: '127.0.0.1', family: 'IPv4', port });
    expect(await through(port, 'CONNECT example.com:443')).toBe('proxy:CONNECT example.com:443');
  });

  it('a tool killed by a signal: the relay kills itself with that signal (exit 1 only if it survives it)', async () => {
    const { code, kill } = await relay({ socket, port: await freePort(), command: ['/bin/sh', '-c', 'kill -TERM $$'] });
    expect(kill).toHaveBeenCalledWith(process.pid, 'SIGTERM');
    expect(code).toBe(1);
  });

  it('a tool that cannot start: its error on stderr, exit 127', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const { code } = await relay({ socket, port: await freePort(), command: [join(scratch, 'no-such-tool'), 'x'] });
    expect(code).toBe(127);
    expect(stderr).toHaveBeenCalledWith(`spawn ${join(scratch, 'no-such-tool')} ENOENT\n`);
  });

  it("a tool's connection reset: the relay also ends its connection to the proxy", async () => {
    const port = await freePort();
    await relay({ socket, port, command: ['/bin/sh', '-c', 'exit 0'] });
    const client = net.connect(port, '127.0.0.1');
    client.on('error', () => {});
    await new Promise((done) => {
      client.once('data', done);
      client.write('CONNECT example.com:443');
    });
    const proxySide = proxied.at(-1)!;
    const closed = new Promise<string>((done) => proxySide.once('close', () => done('closed')));
    client.resetAndDestroy();
    // Else the proxy's side would stay open until the proxy's idle time-out.
    expect(await Promise.race([closed, new Promise<string>((done) => setTimeout(() => done('still open'), 2000))])).toBe('closed');
  });

  it('a proxy that cannot be reached: the connection is closed', async () => {
    const port = await freePort();
    await relay({ socket: join(scratch, 'no-proxy.sock'), port, command: ['/bin/sh', '-c', 'exit 0'] });
    expect(await through(port, 'CONNECT example.com:443')).toBe('');
  });
});
