/**
 * What the filtering proxy of proxy.ts answers, request by request, from the source
 * (docs/mutation.md): absolute-form http:// requests passed on as origin-form with their
 * headers and body, only http://, the default port 80, a head too large (431), a request it
 * cannot parse (400), a name that does not resolve or an upstream that cannot be reached
 * (502), an upstream that resets a tunnel, bytes sent before the tunnel was up, the system
 * resolver; the operator's refusal line, row by row, and what its log counts as the same
 * refusal; the hex form of an IPv4-mapped address. The sessions' caps and timeouts and
 * the wildcard rule are in proxy.test.ts.
 */
import { createHook } from 'node:async_hooks';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { refusalLine, startProxy, type ProxyOptions, type ProxyRefusal, type ResolvedAddress } from '../../packages/twylt/src/toolset/sandbox/proxy.js';

/** What each connection to the upstream received, in order. */
/** Resolves once `check()` holds; fails naming `what` after 10 s: a verdict that waits for an event, not for a guessed time. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 10));
  }
}

const received: string[] = [];
let upstream: Server;
let port = 0;
/** A port nothing listens on. */
let closedPort = 0;
/** The upstream's connections, to reset one. */
const sockets: Socket[] = [];

beforeAll(async () => {
  upstream = createServer((socket) => {
    const index = received.push('') - 1;
    sockets.push(socket);
    socket.on('error', () => {});
    socket.on('data', (data) => {
      received[index] += data.toString('latin1');
      if (received[index]!.includes('\r\n\r\n') || received[index] === 'EARLY') socket.write('upstream answer');
    });
  });
  await new Promise<void>((done) => upstream.listen(0, '127.0.0.1', done));
  port = (upstream.address() as AddressInfo).port;
  const spare = createServer();
  await new Promise<void>((done) => spare.listen(0, '127.0.0.1', done));
  closedPort = (spare.address() as AddressInfo).port;
  await new Promise((done) => spare.close(done));
});
afterAll(() => upstream.close());

/** Names no DNS knows. */
const lookup = async (host: string): Promise<ResolvedAddress[]> => {
  if (host === 'up.test') return [{ address: '127.0.0.1', family: 4 }];
  if (host === 'none.test') return [];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

/** Send `request` (all at once) on a session of a proxy allowing `allowed`; what came back until it closed, or `until` matched. */
async function exchange(allowed: string[], request: string | Buffer, options: ProxyOptions & { until?: RegExp; onMatch?: (socket: Socket) => void } = {}): Promise<{ answer: string; refusals: ProxyRefusal[] }> {
  const refusals: ProxyRefusal[] = [];
  const proxy = startProxy(allowed, { lookup, onRefusal: (refusal) => refusals.push(refusal), ...options });
  try {
    const session = proxy.open();
    const answer = await new Promise<string>((done) => {
      const client = connect(session.socket);
      let text = '';
      client.on('error', () => {});
      client.on('data', (data) => {
        text += data.toString('latin1');
        if (options.until?.test(text)) {
          if (options.onMatch) options.onMatch(client);
          else client.destroy();
        }
      });
      client.on('close', () => done(text));
      client.write(request);
    });
    session.close();
    return { answer, refusals };
  } finally {
    await proxy.close();
  }
}

const status = (answer: string) => answer.split('\r\n')[0];
const body = (answer: string) => answer.slice(answer.indexOf('\r\n\r\n') + 4);

describe('absolute-form http:// requests', () => {
  it('are passed on as origin-form, with the version, the headers and the body that came with the head', async () => {
    received.length = 0;
    const { answer } = await exchange([`127.0.0.1:${port}`], `POST http://127.0.0.1:${port}/path/x?q=1 HTTP/1.0\r\nHost: 127.0.0.1\r\nX-One: 1\r\n\r\nBODY`, { until: /upstream answer/ });
    expect(answer).toBe('upstream answer');
    expect(received).toEqual([`POST /path/x?q=1 HTTP/1.0\r\nHost: 127.0.0.1\r\nX-One: 1\r\n\r\nBODY`]);
  });

  it('a request line without a version is passed on as HTTP/1.1', async () => {
    received.length = 0;
    await exchange([`127.0.0.1:${port}`], `GET http://127.0.0.1:${port}/\r\nHost: h\r\n\r\n`, { until: /upstream answer/ });
    expect(received).toEqual([`GET / HTTP/1.1\r\nHost: h\r\n\r\n`]);
  });

  it('without a port: port 80 (allowed, resolved, and unreachable here: 502)', async () => {
    const { answer, refusals } = await exchange(['up.test'], 'GET http://up.test/ HTTP/1.1\r\n\r\n');
    expect(status(answer)).toBe('HTTP/1.1 502 Bad Gateway');
    expect(body(answer)).toBe('cannot reach up.test:80');
    expect(refusals).toEqual([]);
  });

  const bad: [string, string][] = [
    ['an https:// URL (https goes through CONNECT)', `GET https://127.0.0.1:${0}/ HTTP/1.1\r\n\r\n`],
    ['an origin-form request', 'GET / HTTP/1.1\r\nHost: up.test\r\n\r\n'],
    ['a CONNECT without a port', 'CONNECT up.test HTTP/1.1\r\n\r\n'],
    ['a CONNECT target with a word before host:port', 'CONNECT x:up.test:443 HTTP/1.1\r\n\r\n'],
    ['a CONNECT port with more after it', 'CONNECT up.test:443x HTTP/1.1\r\n\r\n'],
    ['an empty request line', '\r\n\r\n'],
  ];
  for (const [what, request] of bad) {
    it(`${what}: 400, and no refusal counted`, async () => {
      const { answer, refusals } = await exchange([`127.0.0.1:${port}`, 'up.test'], request);
      expect(status(answer)).toBe('HTTP/1.1 400 Bad Request');
      expect(answer).toContain(`\r\nContent-Type: text/plain\r\nContent-Length: ${body(answer).length}\r\nConnection: close\r\n\r\n`);
      expect(body(answer)).toBe('the proxy takes CONNECT host:port and absolute-form http:// requests');
      expect(refusals).toEqual([]);
    });
  }
});

describe('the head and the upstream', () => {
  it('a head past 16 KiB without its end: 431', async () => {
    const { answer } = await exchange([], `GET http://up.test/ HTTP/1.1\r\nX: ${'a'.repeat(16 * 1024)}`);
    expect(status(answer)).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(body(answer)).toBe('request head too large');
  });

  it('exactly 16 KiB without its end: still waiting (closed only when idle, with no answer)', async () => {
    const { answer } = await exchange([], Buffer.alloc(16 * 1024, 'a'), { idleMs: 300 });
    expect(answer).toBe('');
  });

  it('a name that does not resolve, or resolves to nothing: 502', async () => {
    for (const host of ['nowhere.test', 'none.test']) {
      const { answer, refusals } = await exchange([host], `CONNECT ${host}:443 HTTP/1.1\r\n\r\n`);
      expect(status(answer)).toBe('HTTP/1.1 502 Bad Gateway');
      expect(body(answer)).toBe(`cannot resolve ${host}`);
      expect(refusals).toEqual([]);
    }
  });

  it('an upstream that cannot be reached: 502 naming it', async () => {
    const { answer } = await exchange([`127.0.0.1:${closedPort}`], `CONNECT 127.0.0.1:${closedPort} HTTP/1.1\r\n\r\n`);
    expect(answer).toBe(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: ${`cannot reach 127.0.0.1:${closedPort}`.length}\r\nConnection: close\r\n\r\ncannot reach 127.0.0.1:${closedPort}`);
  });

  it('bytes sent right after the CONNECT head reach the upstream once the tunnel is up', async () => {
    received.length = 0;
    const { answer } = await exchange([`127.0.0.1:${port}`], `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\nEARLY`, { until: /upstream answer/ });
    expect(answer).toBe('HTTP/1.1 200 Connection established\r\n\r\nupstream answer');
    expect(received).toEqual(['EARLY']);
  });

  it('an upstream that resets an open tunnel ends it: no answer of the proxy inside the tunnel', async () => {
    sockets.length = 0;
    const { answer } = await exchange([`127.0.0.1:${port}`], `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\nEARLY`, {
      until: /upstream answer$/,
      onMatch: () => sockets.at(-1)!.resetAndDestroy(),
    });
    expect(answer).toBe('HTTP/1.1 200 Connection established\r\n\r\nupstream answer');
  });

  it("the system's resolver when none is given (localhost, an exact entry)", async () => {
    const refusals: ProxyRefusal[] = [];
    const proxy = startProxy([`localhost:${port}`], { onRefusal: (refusal) => refusals.push(refusal) });
    try {
      const session = proxy.open();
      const answer = await new Promise<string>((done) => {
        const client = connect(session.socket);
        let text = '';
        client.on('data', (data) => {
          text += data.toString();
          if (text.endsWith('upstream answer')) client.destroy();
        });
        client.on('close', () => done(text));
        client.write(`CONNECT localhost:${port} HTTP/1.1\r\n\r\nEARLY`);
      });
      expect(answer).toBe('HTTP/1.1 200 Connection established\r\n\r\nupstream answer');
      session.close();
    } finally {
      await proxy.close();
    }
  });
});

describe("the operator's refusal line", () => {
  const rows: [string, Parameters<typeof refusalLine>[0], ProxyRefusal, string][] = [
    ['a named tool, a host', { tool: 'fetch' }, { host: 'evil.example', port: 443, message: 'twylt sandbox: evil.example:443 is not an allowed host' }, 'twylt sandbox: refused a connection to evil.example:443 of tool "fetch": evil.example:443 is not an allowed host'],
    ['an IPv6 host in brackets', { tool: 'fetch' }, { host: '::1', port: 80, message: 'm' }, 'twylt sandbox: refused a connection to [::1]:80 of tool "fetch": m'],
    ['no host (the cap)', { tool: 'fetch' }, { message: 'twylt sandbox: too many' }, 'twylt sandbox: refused a connection of tool "fetch": too many'],
    ['no name: the command\'s files, not its options nor its JSON input', { command: ['/usr/bin/python3', '-u', '/pack/tools/fetch.py', '{"url":"x"}', '--x=1'] }, { host: 'h', port: 1, message: 'm' }, 'twylt sandbox: refused a connection to h:1 of the tool "python3 fetch.py": m'],
    ['a name wins over the command', { tool: 'named', command: ['/bin/other'] }, { message: 'm' }, 'twylt sandbox: refused a connection of tool "named": m'],
    ['neither', {}, { message: 'm' }, 'twylt sandbox: refused a connection of a tool: m'],
    ['only a leading "twylt sandbox: " is dropped from the message', { tool: 't' }, { message: 'x twylt sandbox: y' }, 'twylt sandbox: refused a connection of tool "t": x twylt sandbox: y'],
    ['an unprintable host and message', { tool: 't' }, { host: 'a\nb c\x7f', port: 1, message: 'x\ty\u00e9' }, 'twylt sandbox: refused a connection to a?b?c?:1 of tool "t": x?y?'],
    ['a host bounded to 255 characters', { tool: 't' }, { host: 'a'.repeat(300), port: 1, message: 'm' }, `twylt sandbox: refused a connection to ${'a'.repeat(255)}:1 of tool "t": m`],
  ];
  for (const [what, tool, refusal, line] of rows) it(what, () => expect(refusalLine(tool, refusal)).toBe(line));

  it("the command's part bounded to 120 characters", () => {
    expect(refusalLine({ command: [`/p/${'x'.repeat(200)}`] }, { message: 'm' })).toBe(`twylt sandbox: refused a connection of the tool "${'x'.repeat(120)}": m`);
  });

  it('the log: each refusal once a minute; past 1000 different ones the memory of them starts over', async () => {
    const lines: string[] = [];
    const proxy = startProxy([], { log: (line) => lines.push(line) });
    try {
      const session = proxy.open();
      const refuse = (host: string) =>
        new Promise<void>((done) => {
          const client = connect(session.socket);
          client.on('error', () => {});
          client.on('data', () => {});
          client.on('close', () => done());
          client.write(`CONNECT ${host}:443 HTTP/1.1\r\n\r\n`);
        });
      for (let start = 0; start < 1000; start += 50) await Promise.all(Array.from({ length: 50 }, (_, i) => refuse(`h${start + i}.test`)));
      expect(lines).toHaveLength(1000);
      await refuse('h0.test');
      expect(lines).toHaveLength(1000);
      // The 1001st different one clears the memory: h0 is logged again.
      await refuse('new.test');
      await refuse('h0.test');
      expect(lines).toHaveLength(1002);
      session.close();
    } finally {
      await proxy.close();
    }
  });

  it('the log: another port of the same host is another refusal; the fields name no tool and no host when there are none', async () => {
    const fields: object[] = [];
    const proxy = startProxy([], { log: (_line, refusal) => fields.push(refusal) });
    const capped = startProxy([], { log: (_line, refusal) => fields.push(refusal), maxConnections: 0 });
    try {
      const send = (socket: string, host: string) =>
        new Promise<void>((done) => {
          const client = connect(socket);
          client.on('error', () => {});
          client.on('data', () => {});
          client.on('close', () => done());
          client.write(`CONNECT ${host} HTTP/1.1\r\n\r\n`);
        });
      const session = proxy.open();
      await send(session.socket, 'evil.test:443');
      await send(session.socket, 'evil.test:8443');
      await send(capped.open().socket, 'evil.test:443');
      expect(fields).toStrictEqual([
        { host: 'evil.test', port: 443, message: 'twylt sandbox: evil.test:443 is not an allowed host (--sandbox-allow-net)' },
        { host: 'evil.test', port: 8443, message: 'twylt sandbox: evil.test:8443 is not an allowed host (--sandbox-allow-net)' },
        { message: "twylt sandbox: this call has 0 connections open through the proxy, the most one call may have; close one first" },
      ]);
    } finally {
      await proxy.close();
      await capped.close();
    }
  });
});

/** A CONNECT to `host` on `socket`, resolved once the proxy has closed the connection (its refusal is reported by then). */
function refuseOn(socket: string, host: string): Promise<void> {
  return new Promise<void>((done) => {
    const client = connect(socket);
    client.on('error', () => {});
    client.on('data', () => {});
    client.on('close', () => done());
    client.write(`CONNECT ${host} HTTP/1.1\r\n\r\n`);
  });
}

describe("the operator's log: what counts as the same refusal", () => {
  it('a name refused again as it resolves to another internal address (round robin) is the same refusal: one line', async () => {
    const lines: string[] = [];
    const refusals: ProxyRefusal[] = [];
    let next = 0;
    const roundRobin = async (): Promise<ResolvedAddress[]> => [{ address: `10.0.0.${++next}`, family: 4 }];
    const proxy = startProxy(['*.rr.test'], { lookup: roundRobin, log: (line) => lines.push(line), onRefusal: (refusal) => refusals.push(refusal) });
    try {
      const session = proxy.open();
      await refuseOn(session.socket, 'a.rr.test:443');
      await refuseOn(session.socket, 'a.rr.test:443');
      // Two refusals with two messages (each names its address), for one host and port.
      expect(refusals.map(({ message }) => /resolves to (\S+),/.exec(message)?.[1])).toEqual(['10.0.0.1', '10.0.0.2']);
      expect(lines).toEqual([
        'twylt sandbox: refused a connection to a.rr.test:443 of a tool: a.rr.test resolves to 10.0.0.1, a loopback, link-local or private address, which a wildcard entry never reaches (allow the host itself)',
      ]);
      session.close();
    } finally {
      await proxy.close();
    }
  });

  it('the same refusal is logged again a minute after it was, to the millisecond, and not a millisecond sooner', async () => {
    const lines: string[] = [];
    // Only Date is faked (the proxy's clock for the log); sockets and timers run as ever.
    vi.useFakeTimers({ toFake: ['Date'] });
    const proxy = startProxy([], { log: (line) => lines.push(line) });
    try {
      const session = proxy.open();
      vi.setSystemTime(1_000_000);
      await refuseOn(session.socket, 'evil.test:443');
      vi.setSystemTime(1_000_000 + 59_999);
      await refuseOn(session.socket, 'evil.test:443');
      expect(lines).toHaveLength(1);
      vi.setSystemTime(1_000_000 + 60_000);
      await refuseOn(session.socket, 'evil.test:443');
      expect(lines).toHaveLength(2);
      session.close();
    } finally {
      vi.useRealTimers();
      await proxy.close();
    }
  });
});

describe("the proxy's close()", () => {
  it("ends the sessions still open and their tunnels", async () => {
    const proxy = startProxy([`127.0.0.1:${port}`], { lookup });
    const session = proxy.open();
    const client = connect(session.socket);
    const established = new Promise<void>((done) => client.on('data', (data) => data.toString().includes('200') && done()));
    const closed = new Promise<void>((done) => client.on('close', () => done()));
    client.on('error', () => {});
    client.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
    await established;
    expect(session.connections).toBe(1);
    await proxy.close();
    await closed;
    await until(() => session.connections === 0, 'the tunnel to be uncounted');
  });
});

describe("a session's own ends", () => {
  it('the refusal of a connection past the cap names the cap', async () => {
    const { answer, refusals } = await exchange([], 'x', { maxConnections: 0 });
    const message = 'twylt sandbox: this call has 0 connections open through the proxy, the most one call may have; close one first';
    expect(status(answer)).toBe('HTTP/1.1 429 Too Many Requests');
    expect(refusals).toEqual([{ message }]);
  });

  // A tool that closes its end without reading the proxy's answer resets it (unread bytes in a
  // Unix socket's queue): the proxy's socket sees ECONNRESET, which must not end the consumer.
  const unread: [string, ProxyOptions, string][] = [
    ['its 429 past the cap', { maxConnections: 0 }, ''],
    ['its 403 for a host not allowed', {}, 'CONNECT blocked.test:443 HTTP/1.1\r\n\r\n'],
  ];
  for (const [what, options, request] of unread) {
    it(`a tool that resets without reading ${what}: the proxy carries on`, async () => {
      const proxy = startProxy([], { lookup, ...options });
      try {
        const session = proxy.open();
        const client = connect(session.socket);
        // Paused before it connects: nothing is read from the socket, so the answer stays unread.
        client.pause();
        client.on('error', () => {});
        await new Promise((done) => client.once('connect', done));
        if (request) client.write(request);
        await new Promise((done) => setTimeout(done, 150));
        const closed = new Promise((done) => client.once('close', done));
        client.destroy();
        await closed;
        // The proxy's side is reset; its error (and a crash, if unhandled) comes before the count drops.
        await until(() => session.connections === 0, 'the proxy to close its side');
        session.close();
      } finally {
        await proxy.close();
      }
    });
  }

  it("an open session does not hold the consumer's event loop", async () => {
    const proxy = startProxy([], { lookup });
    const pipes = () => process.getActiveResourcesInfo().filter((type) => type === 'PipeServerWrap' || type === 'PipeWrap').length;
    const before = pipes();
    const session = proxy.open();
    expect(pipes()).toBe(before);
    session.close();
    await proxy.close();
  });

  it("each of a session's async contexts is destroyed once: adopt() ends the old one, close() (twice) the last", async () => {
    const made = new Set<number>();
    const destroyed: number[] = [];
    const hook = createHook({
      init: (id, type) => {
        if (type === 'TwyltProxySession') made.add(id);
      },
      destroy: (id) => {
        if (made.has(id)) destroyed.push(id);
      },
    }).enable();
    const proxy = startProxy([], { lookup });
    try {
      const session = proxy.open();
      session.adopt();
      session.close();
      session.close();
      await new Promise((done) => setTimeout(done, 100));
    } finally {
      hook.disable();
      await proxy.close();
    }
    expect(made.size).toBe(2);
    expect(destroyed.sort()).toEqual([...made].sort());
  });

  /** A proxy allowing slow.test (the test's upstream), whose name takes 200 ms to resolve. */
  function slowProxy() {
    received.length = 0;
    const slow = async (host: string): Promise<ResolvedAddress[]> => {
      await new Promise((done) => setTimeout(done, 200));
      return lookup(host === 'slow.test' ? 'up.test' : host);
    };
    return startProxy([`slow.test:${port}`], { lookup: slow });
  }

  it('a tool gone before its name resolved: no upstream is opened for it', async () => {
    const proxy = slowProxy();
    try {
      const session = proxy.open();
      const client = connect(session.socket);
      client.on('error', () => {});
      client.write(`CONNECT slow.test:${port} HTTP/1.1\r\n\r\nEARLY`);
      await new Promise((done) => setTimeout(done, 50));
      client.destroy();
      await new Promise((done) => setTimeout(done, 400));
      // Else its upstream would stay open: the client's close, which ends it, has passed.
      expect(received).toEqual([]);
      session.close();
    } finally {
      await proxy.close();
    }
  });

  it('bytes sent while the name is still being resolved wait for the tunnel; a second head inside the tunnel is only data', async () => {
    const proxy = slowProxy();
    try {
      const session = proxy.open();
      const client = connect(session.socket);
      client.on('error', () => {});
      let text = '';
      const answered = new Promise<void>((done) =>
        client.on('data', (data) => {
          text += data.toString('latin1');
          if (text.endsWith('upstream answer')) done();
        }),
      );
      client.write(`CONNECT slow.test:${port} HTTP/1.1\r\n\r\n`);
      await new Promise((done) => setTimeout(done, 50));
      client.write('EARLY');
      await answered;
      client.write(`GET / HTTP/1.1\r\n\r\n`);
      await until(() => text.endsWith('upstream answerupstream answer'), 'the second answer');
      // The test's upstream answers each piece that holds a head's end: twice, on one connection.
      expect(text).toBe('HTTP/1.1 200 Connection established\r\n\r\nupstream answerupstream answer');
      expect(received).toEqual([`EARLYGET / HTTP/1.1\r\n\r\n`]);
      client.destroy();
      session.close();
    } finally {
      await proxy.close();
    }
  });
});

// Each end of a tunnel closes the other, also when the other keeps its half open: else a
// half-open side holds one of the call's connections until the idle time-out.
describe("a tunnel's ends", () => {
  /** An upstream that keeps its half open (allowHalfOpen) and, when `endFirst`, ends its side once the tunnel is up. */
  async function halfOpenUpstream(endFirst: boolean) {
    const accepted: Socket[] = [];
    const server = createServer({ allowHalfOpen: true }, (socket) => {
      accepted.push(socket);
      socket.on('error', () => {});
      socket.on('data', () => {
        if (endFirst) socket.end('bye');
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return { server, accepted, port: (server.address() as AddressInfo).port };
  }

  it('an upstream that ends its side closes the tool\'s connection, even one the tool keeps half open', async () => {
    const up = await halfOpenUpstream(true);
    const proxy = startProxy([`127.0.0.1:${up.port}`], { lookup });
    try {
      const session = proxy.open();
      const client = connect({ path: session.socket, allowHalfOpen: true });
      client.on('error', () => {});
      let text = '';
      const ended = new Promise<void>((done) => client.on('end', () => done()));
      client.on('data', (data) => {
        text += data.toString('latin1');
      });
      client.write(`CONNECT 127.0.0.1:${up.port} HTTP/1.1\r\n\r\nHELLO`);
      await ended;
      expect(text).toBe('HTTP/1.1 200 Connection established\r\n\r\nbye');
      await until(() => session.connections === 0, 'the tunnel to be uncounted');
      client.destroy();
      session.close();
    } finally {
      await proxy.close();
      up.server.close();
    }
  });

  it('a tool gone closes its upstream, even one that keeps its half open', async () => {
    const up = await halfOpenUpstream(false);
    const proxy = startProxy([`127.0.0.1:${up.port}`], { lookup });
    try {
      const session = proxy.open();
      const client = connect(session.socket);
      client.on('error', () => {});
      const established = new Promise<void>((done) => client.on('data', () => done()));
      client.write(`CONNECT 127.0.0.1:${up.port} HTTP/1.1\r\n\r\nHELLO`);
      await established;
      await until(() => up.accepted.length > 0, 'the upstream to accept');
      const upstreamSide = up.accepted[0]!;
      const gone = new Promise<string>((done) => {
        upstreamSide.once('close', () => done('closed'));
        setTimeout(() => done('still open'), 10_000);
      });
      // Two late writes: the first is answered with a reset when the proxy's socket is closed, the second then fails (EPIPE).
      upstreamSide.once('end', () => {
        setTimeout(() => upstreamSide.write('late'), 50);
        setTimeout(() => upstreamSide.write('later'), 150);
      });
      client.destroy();
      expect(await gone).toBe('closed');
      session.close();
    } finally {
      await proxy.close();
      for (const socket of up.accepted) socket.destroy();
      up.server.close();
    }
  });
});

describe('brackets around a host', () => {
  // Only a bracket pair around an IPv6 address is dropped: a bracket inside a name stays, so
  // `up[.test` or `up].test` is never taken for the allowed `up.test`.
  for (const target of ['up[.test', 'up].test']) {
    it(`a CONNECT to ${target}:443 is not one to up.test:443`, async () => {
      const { answer, refusals } = await exchange(['up.test:443'], `CONNECT ${target}:443 HTTP/1.1\r\n\r\n`);
      expect(status(answer)).toBe('HTTP/1.1 403 Forbidden');
      expect(refusals).toEqual([{ host: target, port: 443, message: `twylt sandbox: ${target}:443 is not an allowed host (--sandbox-allow-net)` }]);
    });
  }

  it('an http:// URL to [::1]: the host is ::1 (allowed, and nothing listens there: 502)', async () => {
    const { answer, refusals } = await exchange([`[::1]:${closedPort}`], `GET http://[::1]:${closedPort}/ HTTP/1.1\r\n\r\n`);
    expect(status(answer)).toBe('HTTP/1.1 502 Bad Gateway');
    expect(body(answer)).toBe(`cannot reach ::1:${closedPort}`);
    expect(refusals).toEqual([]);
  });
});

// answer(): the tool reads its answer whatever else it sends; the connection ends when the tool
// closes its end, or a grace after the answer when it never does, and holds nothing meanwhile.
describe("a refused connection's answer", () => {
  /** Open a connection on a fresh proxy's session, send `request`, resolve with the client once the whole answer is read. */
  async function refused(request: string | Buffer, options: ProxyOptions & { allowHalfOpen?: boolean; onWrite?: () => void } = {}) {
    const proxy = startProxy([], { lookup, idleMs: 10_000, ...options });
    const session = proxy.open();
    const client = connect({ path: session.socket, allowHalfOpen: options.allowHalfOpen ?? false });
    const errors: string[] = [];
    client.on('error', (error: NodeJS.ErrnoException) => errors.push(error.code ?? error.message));
    let text = '';
    const answered = new Promise<void>((done) =>
      client.on('data', (data) => {
        text += data.toString('latin1');
        if (text.includes('\r\n\r\n') && body(text).length === Number(/Content-Length: (\d+)/.exec(text)?.[1])) done();
      }),
    );
    const closed = new Promise<number>((done) => client.on('close', () => done(performance.now())));
    client.write(request);
    options.onWrite?.();
    await answered;
    return { proxy, session, client, errors, closed, text: () => text, answeredAt: performance.now() };
  }

  it('a tool that reads its 403, sends more and closes: its connection ends on that end, not by the grace', async () => {
    // The grace (1 s) is held back: only reading the tool's end can close the connection, however loaded the machine.
    const setTimer = globalThis.setTimeout;
    const held = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((callback: () => void, ms?: number) => (ms === 1000 ? setTimer(() => {}, 0) : setTimer(callback, ms))) as typeof setTimeout);
    try {
      const { proxy, session, client, closed, text } = await refused('CONNECT blocked.test:443 HTTP/1.1\r\n\r\n', { allowHalfOpen: true, idleMs: 60_000 });
      try {
        expect(status(text())).toBe('HTTP/1.1 403 Forbidden');
        expect(held.mock.calls.some(([, ms]) => ms === 1000)).toBe(true);
        // The proxy's side was paused for the lookup: it reads (and drops) these bytes, then sees the end.
        client.end('MORE');
        await closed;
        // The tool's side closes at once either way; the proxy's side only if it reads the end (with the mutant, never).
        await until(() => session.connections === 0, 'the connection to be uncounted');
      } finally {
        await proxy.close();
      }
    } finally {
      held.mockRestore();
    }
  });

  it('a tool that keeps its end open: closed by the proxy a grace (1 s) after the answer, a timer that holds no event loop', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
    const before = timers();
    // An idle time far past the wait below: the grace, not the idle time-out, must end the connection.
    const { proxy, session, client, text } = await refused('CONNECT blocked.test:443 HTTP/1.1\r\n\r\n', { allowHalfOpen: true, idleMs: 60_000 });
    try {
      expect(status(text())).toBe('HTTP/1.1 403 Forbidden');
      expect(timers()).toBe(before);
      expect(session.connections).toBe(1);
      await until(() => session.connections === 0, 'the grace to end the connection');
    } finally {
      client.destroy();
      await proxy.close();
    }
  });

  it('a tool that keeps writing after its 431: the proxy reads and drops it, the tool reads one whole answer, no reset', async () => {
    let writer: NodeJS.Timeout | undefined;
    let clientRef: Socket | undefined;
    const { proxy, session, client, errors, text, closed } = await refused(`GET http://up.test/ HTTP/1.1\r\nX: ${'a'.repeat(17 * 1024)}`, {
      allowHalfOpen: true,
      onWrite: () => {
        writer = setInterval(() => clientRef?.writable && clientRef.write('b'.repeat(4096)), 5);
      },
    });
    clientRef = client;
    try {
      await new Promise((done) => setTimeout(done, 200));
      clearInterval(writer);
      expect(status(text())).toBe('HTTP/1.1 431 Request Header Fields Too Large');
      expect(body(text())).toBe('request head too large');
      client.end();
      await closed;
      expect(errors).toEqual([]);
      // The proxy's side ends after the tool's: waited for, not assumed.
      await until(() => session.connections === 0, 'the connection to be uncounted');
    } finally {
      clearInterval(writer);
      await proxy.close();
    }
  });
});
