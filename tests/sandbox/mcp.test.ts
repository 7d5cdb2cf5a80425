/**
 * `twylt-mcp --sandbox` (issue 28): the bridge serves its tools sandboxed over stdio (a file
 * outside the workspace read without the flag, refused with it, the bridge serving on), it
 * refuses to start when the sandbox cannot work, and `--http` beyond loopback without
 * `--sandbox` warns. `twylt inspect --sandbox` runs its calls the same way. No server here listens beyond 127.0.0.1: the warning is read from a
 * bridge asked to listen on an address this machine does not have.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleTool } from '../support/bundle-tool.js';
import { send, startInspect } from '../inspect/support.js';
import { bridgeCommand, bridgeEnv, startBridge, textOf, waitFor } from '../support/mcp.js';
import { startHttpBridge } from '../support/mcp-http.js';
import { ROOT } from '../support/process.js';
import { SANDBOX_SKIP_REASON } from './support.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-sandbox-mcp-'));
const secret = join(scratch, 'elsewhere', 'secret.txt');
let tool: string[];
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Run the bridge to its end (it is expected not to serve): exit code and stderr. */
function runBridge(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string }> {
  const command = bridgeCommand();
  return new Promise((resolve) => {
    const child = spawn(command[0]!, [...command.slice(1), ...args], { cwd: ROOT, env: { ...bridgeEnv(), ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe.skipIf(SANDBOX_SKIP_REASON !== undefined)(`twylt-mcp --sandbox${SANDBOX_SKIP_REASON ? ` (skipped: ${SANDBOX_SKIP_REASON})` : ''}`, () => {
  beforeAll(async () => {
    mkdirSync(join(scratch, 'elsewhere'));
    mkdirSync(join(scratch, 'built'));
    writeFileSync(secret, 'the secret');
    // In a folder of its own: the folder of a tool's file is its code, readable.
    tool = [process.execPath, await bundleTool(join(ROOT, 'tests/fixtures/sandbox/read_file.ts'), join(scratch, 'built'))];
  });

  it('over stdio: a file outside the workspace is read without --sandbox, refused with it, and the bridge serves on', async () => {
    const plain = await startBridge(['--', ...tool]);
    const boxed = await startBridge(['--sandbox', '--', ...tool]);
    try {
      const without = await plain.client.callTool({ name: 'read_file', arguments: { path: secret } });
      expect(without.isError ?? false).toBe(false);
      expect(textOf(without)).toContain('the secret');
      const within = await boxed.client.callTool({ name: 'read_file', arguments: { path: secret } });
      expect(within.isError).toBe(true);
      expect(JSON.stringify(within.content)).toContain('ENOENT');
      // Its workspace (the bridge's working directory, here the repository) is readable.
      const own = await boxed.client.callTool({ name: 'read_file', arguments: { path: 'package.json' } });
      expect(own.isError ?? false).toBe(false);
      expect(textOf(own)).toContain('workspaces');
    } finally {
      await plain.close();
      await boxed.close();
    }
  }, 180_000);

  it('a config file: "sandbox" as its default sandboxes a tool without --sandbox, and a tool\'s own "sandbox": false does not', async () => {
    const config = join(scratch, 'tools.json');
    writeFileSync(
      config,
      JSON.stringify({ sandbox: true, tools: [{ command: tool, name: 'boxed', cwd: ROOT }, { command: tool, name: 'open', cwd: ROOT, sandbox: false }] }),
    );
    const bridge = await startBridge(['--config', config]);
    try {
      const boxed = await bridge.client.callTool({ name: 'boxed', arguments: { path: secret } });
      expect(boxed.isError).toBe(true);
      const open = await bridge.client.callTool({ name: 'open', arguments: { path: secret } });
      expect(textOf(open)).toContain('the secret');
    } finally {
      await bridge.close();
    }
  }, 180_000);

  it("twylt-ai's sandbox option (a prepared sandbox, as every ToolDefaults takes it): the same tool reads the file without it, not with it", async () => {
    const { describeForAgents } = await import(new URL('../../packages/twylt-ai/dist/index.js', import.meta.url).href);
    const { prepareSandbox } = await import(new URL('../../packages/twylt/dist/toolset/index.js', import.meta.url).href);
    const sandbox = await prepareSandbox(true);
    try {
      const [plain] = await describeForAgents([{ command: tool, cwd: ROOT }]);
      const [boxed] = await describeForAgents([{ command: tool, cwd: ROOT }], { sandbox });
      expect((await plain.run({ path: secret })).output).toEqual({ text: 'the secret' });
      await expect(boxed.run({ path: secret })).rejects.toThrow(/ENOENT/);
      expect((await boxed.run({ path: 'package.json' })).text).toContain('workspaces');
      plain.runner.close();
      boxed.runner.close();
    } finally {
      await sandbox.close();
    }
  }, 180_000);

  it('twylt inspect --sandbox: the page\'s call of the same tool is refused the file it reads without the flag', async () => {
    const callThrough = async (inspect: Awaited<ReturnType<typeof startInspect>>) => {
      const reply = await send(inspect.port, {
        method: 'POST',
        path: '/api/call',
        headers: { authorization: `Bearer ${inspect.token}`, 'content-type': 'application/json', origin: inspect.origin },
        body: JSON.stringify({ tool: 'read_file', input: { path: secret } }),
      });
      expect(reply.status).toBe(200);
      return JSON.parse(reply.body) as { ok: boolean; output?: { text: string }; error?: unknown };
    };
    const plain = await startInspect(['--', ...tool]);
    const boxed = await startInspect(['--sandbox', '--', ...tool]);
    try {
      const without = await callThrough(plain);
      expect(without.ok).toBe(true);
      expect(without.output!.text).toContain('the secret');
      const within = await callThrough(boxed);
      expect(within.ok).toBe(false);
      expect(JSON.stringify(within.error)).toContain('ENOENT');
    } finally {
      await plain.stop();
      await boxed.stop();
    }
  }, 180_000);

  it('over HTTP, a refused host is a sandbox_refusal event of the JSON log, with the tool and the host (over stdio, a line)', async () => {
    const tunnels = [process.execPath, await bundleTool(join(ROOT, 'tests/fixtures/sandbox/tunnels.ts'), join(scratch, 'built'))];
    const bridge = await startHttpBridge(['--sandbox-allow-net', '127.0.0.1:9', '--', ...tunnels], { TWYLT_MCP_TOKEN: 'y'.repeat(32) });
    try {
      const client = await bridge.connect({ token: 'y'.repeat(32) });
      const result = await client.callTool({ name: 'tunnels', arguments: { action: 'connect', host: 'refused.example', port: 443 } });
      expect(JSON.parse(textOf(result)).statuses).toEqual({ 403: 1 });
      await waitFor(() => bridge.events().some((event) => event.event === 'sandbox_refusal'), 'the sandbox_refusal event');
      expect(bridge.events().find((event) => event.event === 'sandbox_refusal')).toMatchObject({
        // An entry without a name is named by its files.
        tool: expect.stringContaining('tunnels'),
        host: 'refused.example',
        port: 443,
        message: 'twylt sandbox: refused.example:443 is not an allowed host (--sandbox-allow-net)',
      });
      expect(bridge.stderr()).not.toContain('twylt sandbox: refused a connection');
    } finally {
      await bridge.stop();
    }
  }, 180_000);

  it('refuses to start when the sandbox cannot work: exit 1, one line why, no stack trace', async () => {
    const { code, stderr } = await runBridge(['--sandbox', '--', ...tool], { TWYLT_SANDBOX_BWRAP: join(scratch, 'no-bwrap') });
    expect(code).toBe(1);
    expect(stderr).toMatch(/cannot start: bubblewrap .* cannot make a sandbox here: .*refusing to run tools unsandboxed/);
    expect(stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('--http beyond loopback warns without --sandbox, and not with it', async () => {
    // 192.0.2.1 (TEST-NET-1) is on no interface here: the bridge warns, then cannot listen.
    const without = await runBridge(['--http', '192.0.2.1:0', '--', ...tool], { TWYLT_MCP_TOKEN: 'x'.repeat(32) });
    expect(without.stderr).toContain('without --sandbox');
    const within = await runBridge(['--http', '192.0.2.1:0', '--sandbox', '--', ...tool], { TWYLT_MCP_TOKEN: 'x'.repeat(32) });
    expect(within.stderr).not.toContain('without --sandbox');
    expect(within.code).not.toBe(0);
  }, 120_000);
});

/**
 * The bridge's "beyond loopback" check is twylt/server's isLoopback (issue 35): every name of
 * this machine stays quiet, `*.localhost` and the long `::1` included. Each bridge is asked
 * for a port this test already holds on both loopback addresses, so it warns (or not), then
 * cannot listen and ends; an address this machine does not have warns.
 */
describe('twylt-mcp --http: which hosts are beyond loopback', () => {
  const echo = [process.execPath, join(ROOT, 'build/examples/echo/tool.js')];
  const held: Server[] = [];
  let port = 0;
  const hold = (host: string, at: number) =>
    new Promise<Server>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(at, host, () => resolve(server));
    });
  beforeAll(async () => {
    // The same port on 127.0.0.1 and ::1; a few tries, as the second may be taken.
    for (let attempt = 0; attempt < 5 && port === 0; attempt++) {
      const first = await hold('127.0.0.1', 0);
      const at = (first.address() as { port: number }).port;
      try {
        held.push(first, await hold('::1', at));
        port = at;
      } catch {
        first.close();
      }
    }
    if (port === 0) throw new Error('found no port free on both 127.0.0.1 and ::1');
  });
  afterAll(() => {
    for (const server of held) server.close();
  });

  const rows: [string, boolean][] = [
    ['127.0.0.1', false],
    ['localhost', false],
    ['app.localhost', false],
    ['[::1]', false],
    ['[0:0:0:0:0:0:0:1]', false],
    ['192.0.2.1', true],
  ];
  for (const [host, warns] of rows) {
    it(`${host}: ${warns ? 'warns' : 'no warning'}`, async () => {
      const { code, stderr } = await runBridge(['--http', `${host}:${port}`, '--', ...echo], { TWYLT_MCP_TOKEN: 'x'.repeat(32) });
      expect(code).not.toBe(0);
      if (warns) expect(stderr).toContain('without --sandbox');
      else expect(stderr).not.toContain('without --sandbox');
    }, 60_000);
  }
});
