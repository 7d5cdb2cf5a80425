/**
 * The sandbox's filtering proxy (issue 34): each call has a session of its own (a Unix
 * socket), holding at most MAX_CONNECTIONS_PER_CALL connections (the next one answered 429
 * and counted as a refusal), idle ones closed, all of them ended with the call; a wildcard
 * entry never reaches a loopback, link-local or private address (every address checked, the
 * checked one connected to); a refused host is logged for the operator with the tool and
 * the host, and counted with the tool's label. The proxy alone in this process first, then
 * end to end through the real twylt-mcp (as root and as nobody), with a consumer that runs
 * out of descriptors and serves on.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, isIP, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CONNECTIONS_PER_CALL, startProxy, type ProxyRefusal, type ResolvedAddress } from '../../packages/twylt/src/toolset/sandbox/proxy.js';
import { bundleTool } from '../support/bundle-tool.js';
import { bridgeCommand, isRunning, startBridge, textOf, waitFor, type Bridge } from '../support/mcp.js';
import { ROOT } from '../support/process.js';
import { metricsUrl } from '../observe/support.js';
import { AS_NOBODY, UNPRIVILEGED_SKIP_REASON, type UnprivilegedCopy, unprivilegedCopy } from '../support/unprivileged.js';
import { SANDBOX_SKIP_REASON } from './support.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-sandbox-proxy-'));
/** The echo server's connections open now. */
const upstream = new Set<Socket>();
let echo: Server;
let echoPort = 0;
let otherPort = 0;
let other: Server;

beforeAll(async () => {
  echo = createServer((socket) => {
    upstream.add(socket);
    socket.on('close', () => upstream.delete(socket));
    socket.on('error', () => {});
    socket.write('hello through the tunnel\n');
    socket.on('data', (data) => socket.write(data));
  });
  other = createServer((socket) => socket.end('the other server\n'));
  echoPort = await listen(echo);
  otherPort = await listen(other);
});
afterAll(() => {
  echo.close();
  other.close();
  rmSync(scratch, { recursive: true, force: true });
});

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

interface Tunnel {
  status: number;
  /** The proxy's message for a refusal, else the first bytes from the server. */
  body: string;
  socket: Socket;
}

/** `CONNECT target` on a session's socket, as the relay passes a tool's request on. */
function tunnel(socketPath: string, target: string): Promise<Tunnel> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let text = '';
    socket.on('error', reject);
    socket.on('data', (data) => {
      text += data.toString();
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      const status = Number(text.split(' ')[1]);
      if (status === 200) {
        if (text.length > end + 4) resolve({ status, body: text.slice(end + 4), socket });
        return;
      }
    });
    socket.on('close', () => {
      const status = Number(text.split(' ')[1]);
      if (status !== 200) resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4), socket });
    });
    socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
  });
}

function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));
}

describe("the proxy's sessions: one per call, capped, timed out, ended with the call", () => {
  it(`holds at most ${MAX_CONNECTIONS_PER_CALL} connections per call: the next is a 429 and a refusal; one closed frees a place; another call has its own`, async () => {
    const refusals: ProxyRefusal[] = [];
    const proxy = startProxy([`127.0.0.1:${echoPort}`], { onRefusal: (refusal) => refusals.push(refusal) });
    try {
      const session = proxy.open();
      const open = await Promise.all(Array.from({ length: MAX_CONNECTIONS_PER_CALL }, () => tunnel(session.socket, `127.0.0.1:${echoPort}`)));
      expect(open.map(({ status }) => status)).toEqual(Array(MAX_CONNECTIONS_PER_CALL).fill(200));
      expect(session.connections).toBe(MAX_CONNECTIONS_PER_CALL);
      const past = await tunnel(session.socket, `127.0.0.1:${echoPort}`);
      expect(past.status).toBe(429);
      expect(past.body).toContain(`this call has ${MAX_CONNECTIONS_PER_CALL} connections open through the proxy`);
      expect(refusals).toHaveLength(1);
      // Another call of the same tool is not held back by this one.
      const second = proxy.open();
      const elsewhere = await tunnel(second.socket, `127.0.0.1:${echoPort}`);
      expect(elsewhere.status).toBe(200);
      second.close();
      open[0]!.socket.destroy();
      await waitFor(() => session.connections === MAX_CONNECTIONS_PER_CALL - 1, 'the closed tunnel to be counted out');
      const again = await tunnel(session.socket, `127.0.0.1:${echoPort}`);
      expect(again.status).toBe(200);
      expect(again.body).toBe('hello through the tunnel\n');
      session.close();
      await Promise.all([...open.slice(1), again].map(({ socket }) => closed(socket)));
    } finally {
      await proxy.close();
    }
  });

  it("closing a call's session ends its tunnels (the server's connections too) and removes its socket", async () => {
    const proxy = startProxy([`127.0.0.1:${echoPort}`]);
    try {
      const session = proxy.open();
      const open = await Promise.all(Array.from({ length: 5 }, () => tunnel(session.socket, `127.0.0.1:${echoPort}`)));
      await waitFor(() => upstream.size === 5, 'five connections at the server');
      expect(session.connections).toBe(5);
      session.close();
      await Promise.all(open.map(({ socket }) => closed(socket)));
      await waitFor(() => upstream.size === 0, "the server's connections to close");
      expect(session.connections).toBe(0);
      expect(existsSync(session.socket)).toBe(false);
    } finally {
      await proxy.close();
    }
  });

  it('closes a tunnel idle for idleMs, and keeps one in use', async () => {
    const proxy = startProxy([`127.0.0.1:${echoPort}`], { idleMs: 400 });
    try {
      const session = proxy.open();
      const idle = await tunnel(session.socket, `127.0.0.1:${echoPort}`);
      const busy = await tunnel(session.socket, `127.0.0.1:${echoPort}`);
      const started = Date.now();
      const ping = setInterval(() => busy.socket.write('ping'), 100);
      await closed(idle.socket);
      expect(Date.now() - started).toBeLessThan(5_000);
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(busy.socket.destroyed).toBe(false);
      clearInterval(ping);
      await closed(busy.socket);
      session.close();
    } finally {
      await proxy.close();
    }
  });
});

describe('a wildcard entry never reaches an internal address; an exact one does', () => {
  /** A resolver that knows names no DNS has: the proxy must connect to the address it checked. */
  const lookups: string[] = [];
  const table: Record<string, ResolvedAddress[]> = {
    'api.svc.test': [{ address: '127.0.0.1', family: 4 }],
    'mixed.svc.test': [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.1', family: 4 },
    ],
    'meta.svc.test': [{ address: '169.254.169.254', family: 4 }],
    'six.svc.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
  };
  const lookup = async (host: string) => {
    lookups.push(host);
    const found = table[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };

  const rows = (): [string, string[], string, number, RegExp | 200][] => [
    ['a wildcard, a name resolving to 127.0.0.1', [`*.svc.test:${echoPort}`], 'api.svc.test', echoPort, /api\.svc\.test resolves to 127\.0\.0\.1, a loopback, link-local or private address, which a wildcard entry never reaches/],
    ['a wildcard, a name with a public and a private address', ['*.svc.test:443'], 'mixed.svc.test', 443, /resolves to 10\.0\.0\.1/],
    ['a wildcard, the metadata address', ['*.svc.test'], 'meta.svc.test', 80, /resolves to 169\.254\.169\.254/],
    ['a wildcard, an IPv4-mapped loopback', ['*.svc.test'], 'six.svc.test', 443, /resolves to ::ffff:127\.0\.0\.1/],
    ['a wildcard matching an address literal (*.0.0.1)', [`*.0.0.1:${echoPort}`], '127.0.0.1', echoPort, /127\.0\.0\.1 resolves to 127\.0\.0\.1/],
    ['the exact name the operator wrote', [`api.svc.test:${echoPort}`, `*.svc.test:${echoPort}`], 'api.svc.test', echoPort, 200],
    ['the exact address the operator wrote', [`127.0.0.1:${echoPort}`], '127.0.0.1', echoPort, 200],
  ];
  for (const [index, [name, , , , expected]] of rows().entries()) {
    it(`${name}: ${expected === 200 ? 'reached' : 'refused (403)'}`, async () => {
      const [, allowed, host, port] = rows()[index]!;
      const refusals: ProxyRefusal[] = [];
      const proxy = startProxy(allowed, { lookup, onRefusal: (refusal) => refusals.push(refusal) });
      try {
        const session = proxy.open();
        lookups.length = 0;
        const answer = await tunnel(session.socket, `${host}:${port}`);
        if (expected === 200) {
          expect(answer.status, answer.body).toBe(200);
          expect(answer.body).toBe('hello through the tunnel\n');
          answer.socket.destroy();
          expect(refusals).toEqual([]);
        } else {
          expect(answer.status).toBe(403);
          expect(answer.body).toMatch(expected);
          expect(refusals).toEqual([{ host, port, message: answer.body }]);
        }
        // One lookup (none for an address), and the connection went to the address it gave (no DNS knows these names).
        expect(lookups).toEqual(isIP(host) ? [] : [host]);
        session.close();
      } finally {
        await proxy.close();
      }
    });
  }
});

describe('refusals in the operator log', () => {
  it('one line with the tool and the host; the same refusal again within a minute is counted, not logged again', async () => {
    const lines: string[] = [];
    const fields: object[] = [];
    const refusals: ProxyRefusal[] = [];
    const log = (line: string, refusal: object) => {
      lines.push(line);
      fields.push(refusal);
    };
    const proxy = startProxy([`127.0.0.1:${echoPort}`], { tool: 'fetch_things', log, onRefusal: (refusal) => refusals.push(refusal) });
    try {
      const session = proxy.open();
      for (let i = 0; i < 3; i++) expect((await tunnel(session.socket, `evil.example:443`)).status).toBe(403);
      expect((await tunnel(session.socket, `[::1]:${otherPort}`)).status).toBe(403);
      expect(refusals).toHaveLength(4);
      expect(lines).toEqual([
        'twylt sandbox: refused a connection to evil.example:443 of tool "fetch_things": evil.example:443 is not an allowed host (--sandbox-allow-net)',
        `twylt sandbox: refused a connection to [::1]:${otherPort} of tool "fetch_things": ::1:${otherPort} is not an allowed host (--sandbox-allow-net)`,
      ]);
      // The same refusals as fields, for a log that writes JSON (the HTTP bridge's sandbox_refusal event).
      expect(fields).toEqual([
        { tool: 'fetch_things', host: 'evil.example', port: 443, message: 'twylt sandbox: evil.example:443 is not an allowed host (--sandbox-allow-net)' },
        { tool: 'fetch_things', host: '::1', port: otherPort, message: `twylt sandbox: ::1:${otherPort} is not an allowed host (--sandbox-allow-net)` },
      ]);
      session.close();
    } finally {
      await proxy.close();
    }
  });
});

/**
 * The bridge as root, from the checkout, and as nobody, from a world-readable copy of the
 * built packages (tests/support/unprivileged.ts): nobody never runs what is in the checkout,
 * which it cannot read when a folder above it is private (issue 38).
 */
const users: { user: string; skip: string | undefined }[] = [
  { user: 'root', skip: undefined },
  { user: 'nobody', skip: UNPRIVILEGED_SKIP_REASON },
];

describe.skipIf(SANDBOX_SKIP_REASON !== undefined)(`end to end through twylt-mcp${SANDBOX_SKIP_REASON ? ` (skipped: ${SANDBOX_SKIP_REASON})` : ''}`, () => {
  let tool: string[];
  beforeAll(async () => {
    mkdirSync(join(scratch, 'built'));
    tool = [bridgeCommand()[0]!, await bundleTool(join(ROOT, 'tests/fixtures/sandbox/tunnels.ts'), join(scratch, 'built'))];
  }, 60_000);

  for (const { user, skip } of users) {
    describe.skipIf(skip !== undefined)(`the bridge as ${user}${skip ? ` (skipped: ${skip})` : ''}`, () => {
      let bridge: Bridge;
      let workspace: string;
      /** In front of commands run as the bridge's user: setpriv for nobody. */
      let prefix: readonly string[] = [];
      let copy: UnprivilegedCopy | undefined;
      beforeAll(async () => {
        let folder = scratch;
        let command = bridgeCommand();
        let cwd = ROOT;
        let served = tool;
        if (user === 'nobody') {
          copy = unprivilegedCopy();
          folder = copy.scratch('proxy');
          prefix = AS_NOBODY;
          command = [...AS_NOBODY, process.execPath, copy.path('packages/twylt-mcp/dist/cli.js')];
          cwd = copy.root;
          const bundled = await bundleTool(join(ROOT, 'tests/fixtures/sandbox/tunnels.ts'), folder);
          chmodSync(bundled, 0o644); // whatever the umask
          served = [process.execPath, bundled];
        }
        workspace = join(folder, `workspace-${user}`);
        mkdirSync(workspace);
        chmodSync(workspace, 0o777);
        const config = join(folder, `tools-${user}.json`);
        writeFileSync(
          config,
          JSON.stringify({
            tools: [
              { command: served, name: 'tunnels', cwd: workspace, sandbox: { allowNet: [`127.0.0.1:${echoPort}`, `*.0.0.1:${otherPort}`], processes: 0 } },
              { command: served, name: 'plain', cwd: workspace, sandbox: false },
            ],
          }),
        );
        chmodSync(config, 0o644);
        bridge = await startBridge(['--config', config, '--metrics', '127.0.0.1:0', '--max-concurrency', '8'], {}, command, cwd);
      }, 120_000);
      afterAll(async () => {
        await bridge?.close();
        copy?.remove();
      });

      const call = async (name: string, args: Record<string, unknown>) => {
        const result = await bridge.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
        return { isError: result.isError === true, text: result.isError ? JSON.stringify(result.content) : textOf(result) };
      };
      const answer = async (name: string, args: Record<string, unknown>) => {
        const { isError, text } = await call(name, args);
        expect(isError, text).toBe(false);
        return JSON.parse(text) as { statuses: Record<string, number>; message: string; errors: string[] };
      };
      const fds = () => readdirSync(`/proc/${bridge.pid}/fd`).length;

      it(`a tool opening ${MAX_CONNECTIONS_PER_CALL + 36} tunnels gets ${MAX_CONNECTIONS_PER_CALL} and 429s past the cap while another call is served; the tunnels end with the call`, async () => {
        const release = join(workspace, 'release');
        const before = fds();
        const greedy = answer('tunnels', { action: 'open', host: '127.0.0.1', port: echoPort, count: MAX_CONNECTIONS_PER_CALL + 36, release });
        await waitFor(() => upstream.size === MAX_CONNECTIONS_PER_CALL, `${MAX_CONNECTIONS_PER_CALL} tunnels at the server`, 60_000);
        // The consumer serves on: another call of the same tool, its own session.
        expect(await answer('tunnels', { action: 'connect', host: '127.0.0.1', port: echoPort })).toMatchObject({ statuses: { 200: 1 }, message: 'hello through the tunnel' });
        writeFileSync(release, '');
        const held = await greedy;
        expect(held.statuses, JSON.stringify(held.errors)).toEqual({ 200: MAX_CONNECTIONS_PER_CALL, 429: 36 });
        expect(held.message).toContain(`this call has ${MAX_CONNECTIONS_PER_CALL} connections open through the proxy`);
        rmSync(release);
        await waitFor(() => upstream.size === 0, "the finished call's tunnels to close", 20_000);
        await waitFor(() => fds() <= before + 2, `the bridge's descriptors back to about ${before}`, 20_000);
      }, 180_000);

      it('a wildcard entry (*.0.0.1) does not reach 127.0.0.1; the exact entry does', async () => {
        const refused = await answer('tunnels', { action: 'connect', host: '127.0.0.1', port: otherPort });
        expect(refused.statuses).toEqual({ 403: 1 });
        expect(refused.message).toBe(`twylt sandbox: 127.0.0.1 resolves to 127.0.0.1, a loopback, link-local or private address, which a wildcard entry never reaches (allow the host itself)`);
        expect(await answer('tunnels', { action: 'connect', host: '127.0.0.1', port: echoPort })).toMatchObject({ statuses: { 200: 1 }, message: 'hello through the tunnel' });
      }, 120_000);

      it("a refused host is a line on the bridge's stderr with the tool and the host, and counted with the tool's label", async () => {
        const refused = await answer('tunnels', { action: 'connect', host: 'not-allowed.example', port: 443 });
        expect(refused.statuses).toEqual({ 403: 1 });
        await waitFor(() => bridge.stderr().includes('not-allowed.example'), 'the refusal in the log');
        expect(bridge.stderr()).toContain(
          'twylt sandbox: refused a connection to not-allowed.example:443 of tool "tunnels": not-allowed.example:443 is not an allowed host (--sandbox-allow-net)\n',
        );
        const metrics = await (await fetch(metricsUrl(bridge.stderr()))).text();
        const counted = metrics.split('\n').filter((line) => line.startsWith('twylt_sandbox_refusals_total{'));
        // The cap's 36 refusals, the wildcard's and this one: every one with the tool's label.
        expect(counted).toEqual(['twylt_sandbox_refusals_total{reason="network",gen_ai_tool_name="tunnels"} 38']);
      }, 120_000);

      it('out of descriptors, a spawn fails as a call (EMFILE), sandboxed or not, and the bridge serves the next call', async () => {
        // The soft limit only, by the bridge's own user (no CAP_SYS_RESOURCE needed): just above what it has open.
        const [soft, hard] = /Max open files\s+(\d+)\s+(\d+)/.exec(readFileSync(`/proc/${bridge.pid}/limits`, 'utf8'))!.slice(1);
        const setLimit = (value: string) => {
          const result = spawnSync(prefix[0] ?? 'prlimit', [...prefix.slice(1), ...(prefix.length > 0 ? ['prlimit'] : []), '--pid', String(bridge.pid), `--nofile=${value}:${hard}`]);
          expect(result.status, result.stderr.toString()).toBe(0);
        };
        setLimit(String(fds() + 1));
        try {
          for (const name of ['plain', 'tunnels']) {
            const failed = await call(name, { action: 'connect', host: '127.0.0.1', port: echoPort });
            expect(failed.isError, failed.text).toBe(true);
            expect(failed.text, failed.text).toMatch(/EMFILE|cannot listen/);
            // Still there a moment later: the spawn's 'error' event was not left unhandled.
            await new Promise((resolve) => setTimeout(resolve, 200));
            expect(isRunning(bridge.pid), `the bridge exited:\n${bridge.stderr()}`).toBe(true);
          }
        } finally {
          setLimit(soft!);
        }
        for (const name of ['plain', 'tunnels']) {
          const served = await answer(name, { action: 'connect', host: '127.0.0.1', port: echoPort });
          expect(served.statuses, name).toEqual(name === 'plain' ? { 0: 1 } : { 200: 1 });
        }
      }, 120_000);
    });
  }

  // The label does not depend on the user the bridge runs as: root only.
  for (const warm of [false, true]) {
    it(`a tool served from a command line (its name known only from its describe)${warm ? ', warm' : ''}: its refusals carry its label, and the log names it`, async () => {
      const bridge = await startBridge(['--metrics', '127.0.0.1:0', '--sandbox-allow-net', 'allowed.example', ...(warm ? ['--warm', '1'] : []), '--', ...tool]);
      try {
        const result = await bridge.client.callTool({ name: 'tunnels', arguments: { action: 'connect', host: 'nope.example', port: 443 } });
        expect(JSON.parse(textOf(result)).statuses).toEqual({ 403: 1 });
        await waitFor(() => bridge.stderr().includes('nope.example'), 'the refusal in the log');
        expect(bridge.stderr()).toContain('twylt sandbox: refused a connection to nope.example:443 of the tool "node sandbox-tunnels.mjs": nope.example:443 is not an allowed host (--sandbox-allow-net)\n');
        const metrics = await (await fetch(metricsUrl(bridge.stderr()))).text();
        expect(metrics.split('\n').filter((line) => line.startsWith('twylt_sandbox_refusals_total{'))).toEqual(['twylt_sandbox_refusals_total{reason="network",gen_ai_tool_name="tunnels"} 1']);
      } finally {
        await bridge.close();
      }
    }, 120_000);
  }
});
