/**
 * `twylt-mcp --scan` started as MCP clients start servers: with a bare environment (the
 * Inspector passes only HOME PATH PWD SHELL TERM). Everything a served scan needs comes from
 * flags (issue 36): `--envs DIR` names the environments `twylt scan --install --envs DIR`
 * made, and `--python` the interpreter; when every tool is left out, the bridge says so for
 * each, naming --scan. Installs reach PyPI (as tests/catalog/install.test.ts).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { blocksUnder, readDoc } from '../docs/markdown.js';
import { BRIDGE_CLI } from '../support/mcp.js';
import { NO_PYTHON_REASON, noPython, python } from '../support/python.js';
import { PACKS, WORKSPACES, scanJson, scratch } from './support.js';

const dir = scratch('bare-env');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const NEEDS = 'essential/tools/needs_dep/run.py';

/** What the MCP Inspector hands a server it starts: these five and nothing else. */
function bareEnv(home: string): Record<string, string> {
  return { HOME: home, PATH: process.env.PATH ?? '/usr/bin:/bin', PWD: home, SHELL: '/bin/sh', TERM: 'xterm-256color' };
}

/** Start the bridge with exactly `env`, ask tools/list, and return the names and stderr (or the exit when it ends first). */
async function listWith(args: string[], env: Record<string, string>): Promise<{ tools?: string[]; code?: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BRIDGE_CLI, ...args], { cwd: env.HOME, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.on('error', () => {});
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bare', version: '0' } } });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const listed = stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { id?: number; result?: { tools: { name: string }[] } }).find((message) => message.id === 2);
    if (listed) {
      child.kill();
      await exited;
      return { tools: listed.result!.tools.map((tool) => tool.name).sort(), stderr };
    }
    if (child.exitCode !== null) return { code: child.exitCode, stderr };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`no answer to tools/list within 60 s; stderr:\n${stderr}`);
}

describe.skipIf(noPython)(`twylt-mcp --scan with the environment an MCP client gives${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, () => {
  it('serves a tool whose environment `twylt scan --install --envs DIR` made, given --envs DIR and --python', async () => {
    const envs = join(dir, 'envs');
    const installed = await scanJson([join(PACKS, 'essential'), '--install', '--envs', envs]);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.rows.get(NEEDS)).toMatchObject({ name: 'to_toml', status: 'ok' });
    const home = join(dir, 'home');
    mkdirSync(home, { recursive: true });
    // docs/hub.md's configuration, its paths made this machine's.
    const server = (JSON.parse(blocksUnder(readDoc('docs/hub.md'), 'Started by an MCP client', 'json')[0]!.body) as { mcpServers: { packs: { command: string; args: string[]; env: Record<string, string> } } }).mcpServers.packs;
    expect(server.command).toBe('twylt-mcp');
    const here: Record<string, string> = { '/home/me/packs': join(PACKS, 'essential'), '/home/me/.cache/twylt/envs': envs, '/usr/bin/python3': python!, '/home/me/.local/state/twylt/workspaces': WORKSPACES };
    const args = server.args.map((arg) => here[arg] ?? arg);
    const env = Object.fromEntries(Object.entries(server.env).map(([key, value]) => [key, here[value] ?? value]));
    const served = await listWith(args, { ...bareEnv(home), ...env });
    expect(served.tools, served.stderr).toContain('to_toml');
    expect(served.stderr).not.toContain('needs_install');
  }, 300_000);

  it('every tool left out: each is named with its reason, and the end says --scan served none', async () => {
    const tools = join(dir, 'broken');
    mkdirSync(join(tools, 'one'), { recursive: true });
    writeFileSync(join(tools, 'one', 'tool.py'), 'raise SystemExit("this tool cannot start")\n');
    const home = join(dir, 'home2');
    mkdirSync(home, { recursive: true });
    const served = await listWith(['--scan', tools, '--python', python!, '--workspaces', WORKSPACES], bareEnv(home));
    expect(served.code, served.stderr).toBe(1);
    expect(served.stderr).toMatch(/left out .*one\/tool\.py \(failed\): cannot describe it: .*this tool cannot start/);
    expect(served.stderr).not.toContain('give a command after "--" or a --config file');
    expect(served.stderr).toMatch(/no tools to serve: --scan .*broken found 1 tool and left out every one \(the lines above say why\)/);
  }, 120_000);
});
