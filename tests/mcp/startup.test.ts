/**
 * Starting and stopping `twylt-mcp`: the command line, config files, and the refusals that
 * name the tool at fault.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, run } from '../support/process.js';
import { BRIDGE_CLI, SLEEPER, isRunning, sleeperPid, startBridge, textOf, waitFor, type Bridge } from '../support/mcp.js';
import { toMcpTool } from 'twylt-mcp';

const dir = mkdtempSync(join(tmpdir(), 'twylt-mcp-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Run the bridge with stdin closed at once: it starts, or refuses to, and ends. */
function bridge(...args: string[]) {
  return run([process.execPath, BRIDGE_CLI, ...args]);
}

function configFile(name: string, content: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

describe('starting', () => {
  it('serves the tools, logs only to stderr, and ends when its stdin closes', async () => {
    const result = await bridge('--', ...SLEEPER);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('twylt-mcp: serving sleeper');
  });

  it('runs config tools in the config file’s directory by default', async () => {
    const served = await startBridge(['--config', 'tests/fixtures/mcp/tools.json']);
    try {
      const result = await served.client.callTool({ name: 'relative_sleeper', arguments: { action: 'wait' } });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ tag: 'relative' });
      expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
    } finally {
      await served.close();
    }
  });

  it('prints its help and version', async () => {
    const help = await bridge('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: twylt-mcp \[options\] -- COMMAND/);
    const { version } = JSON.parse(readFileSync(join(ROOT, 'packages/twylt-mcp/package.json'), 'utf8')) as { version: string };
    // -V as for twylt.
    for (const flag of ['--version', '-V']) {
      const result = await bridge(flag);
      expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }, flag).toEqual({ code: 0, stdout: `twylt-mcp ${version}\n`, stderr: '' });
    }
  });
});

describe('stopping', () => {
  /** Start a call that waits forever; resolve with its tool's pid once it runs. */
  async function hangingCall(served: Bridge, name: string): Promise<number> {
    const pidFile = join(dir, `${name}.pid`);
    const pending = served.client.callTool({ name: 'sleeper', arguments: { action: 'wait', pid_file: pidFile, release_file: join(dir, 'never') } });
    pending.catch(() => {}); // the bridge goes away before answering
    return sleeperPid(pidFile);
  }

  it('kills the tools still running when its client goes away', async () => {
    const served = await startBridge(['--', ...SLEEPER]);
    const pid = await hangingCall(served, 'orphan');
    await served.close();
    await waitFor(() => !isRunning(pid), `process ${pid} to end`);
  });

  it('kills the tools still running when it is terminated', async () => {
    const served = await startBridge(['--', ...SLEEPER]);
    const pid = await hangingCall(served, 'terminated');
    process.kill(served.pid, 'SIGTERM');
    await waitFor(() => !isRunning(served.pid), 'the bridge to end');
    await waitFor(() => !isRunning(pid), `process ${pid} to end`);
    await served.close();
  });
});

describe('refusing to start', () => {
  it('with --strict, names a tool that cannot be described, and only that one', async () => {
    const result = await bridge('--strict', '--', ...SLEEPER, '--', '/nonexistent/twylt-tool', '--', process.execPath, '-e', 'process.exit(1)');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trim().split('\n');
    expect(lines[0]).toBe('twylt-mcp: cannot start:');
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^twylt-mcp: cannot describe tool \(\/nonexistent\/twylt-tool\): cannot run .*ENOENT/),
      expect.stringMatching(/^twylt-mcp: cannot describe tool \(.*node -e "process\.exit\(1\)"\): tool exited with 1, which is not a TWYLT exit code/),
    ]);
  });

  it('names two tools that share a name', async () => {
    const result = await bridge('--', ...SLEEPER, '--', ...SLEEPER);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('2 tools are named "sleeper"');
    expect(result.stderr).toContain('rename all but one with "name" in a config file');
  });

  it('names the entry and field of a bad config file', async () => {
    const file = configFile('bad.json', { tools: [{ command: [...SLEEPER], timeoutMs: 'soon', shell: true }] });
    const result = await bridge('--config', file);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `twylt-mcp: ${file} is not a valid TWYLT tool-set config:\ntwylt-mcp:   tools[0].timeoutMs: Expected an integer, got "soon"\ntwylt-mcp:   tools[0].shell: Unknown field\n`,
    );
  });

  it('refuses a malformed host in a config file\'s sandbox policy (exit 1, the entry named) instead of serving a tool whose host is silently blocked', async () => {
    const file = configFile('bad-host.json', { tools: [{ command: [...SLEEPER], sandbox: { allowNet: ['https://api.example.com/v1'] } }] });
    const result = await bridge('--config', file);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `twylt-mcp: ${file} is not a valid TWYLT tool-set config:\ntwylt-mcp:   tools[0].sandbox.allowNet[0]: takes HOST, HOST:PORT or *.DOMAIN, got "https://api.example.com/v1"\n`,
    );
    expect(result.stderr).not.toContain('serving');
  });

  it('refuses a time-out longer than a timer holds (Node.js would fire it at once), as the flags do', async () => {
    const file = configFile('long.json', { tools: [{ command: [...SLEEPER], timeoutMs: 2 ** 31, describeTimeoutMs: 3e9 }] });
    const result = await bridge('--config', file);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`twylt-mcp:   tools[0].timeoutMs: `);
    expect(result.stderr).toMatch(/tools\[0\]\.timeoutMs: .*2147483647/);
    expect(result.stderr).toMatch(/tools\[0\]\.describeTimeoutMs: .*2147483647/);
  });

  it('says so when the config file is missing or not JSON', async () => {
    const missing = await bridge('--config', join(dir, 'absent.json'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('cannot read config file');
    const broken = await bridge('--config', configFile('broken.json', '{"tools": ['));
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('is not valid JSON');
  });

  it('treats command-line mistakes as usage errors (exit 64, as twylt)', async () => {
    for (const args of [[], ['python3', 'tool.py'], ['--'], ['--timeout', '0', '--', 'x'], ['--frobnicate']]) {
      const result = await bridge(...args);
      expect(result.code, args.join(' ')).toBe(64);
      expect(result.stderr, args.join(' ')).toContain('Run "twylt-mcp --help" for usage.');
    }
  });
});

describe('schemas MCP cannot carry as they are', () => {
  const spec = (inputSchema: object, outputSchema: object) =>
    ({ format_version: '1.8', name: 't', version: '1', description: 'd', requirements: { tool: 'npm', format: 'package.json', content: '' }, inputSchema, outputSchema, few_shots: [] }) as Parameters<typeof toMcpTool>[1];

  it('passes object schemas through untouched', () => {
    const input = { type: 'object', properties: { a: { type: 'string', 'x-unit': 'cm' } }, required: ['a'], additionalProperties: false, $id: 'In' };
    const output = { type: 'object', properties: {}, additionalProperties: false };
    expect(toMcpTool('t', spec(input, output))).toEqual({ tool: { name: 't', description: 'd', inputSchema: input, outputSchema: output }, warnings: [] });
  });

  it('adds type "object" to an input schema without a type, and leaves out a non-object output schema', () => {
    const { tool, warnings } = toMcpTool('t', spec({}, { type: 'array' }));
    expect(tool.inputSchema).toEqual({ type: 'object' });
    expect(tool.outputSchema).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining('declares no type'), expect.stringContaining('left out of tools/list')]);
  });

  it('refuses an input schema of another type', () => {
    expect(() => toMcpTool('t', spec({ type: 'string' }, {}))).toThrow('its inputSchema has type "string"; MCP needs an object schema');
  });
});
