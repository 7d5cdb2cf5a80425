/**
 * twylt/toolset, the tool lists that twylt-mcp, twylt inspect and twylt-ai share: config
 * files, command lines, and the start-up describe against real tool processes.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  SpecCache,
  ToolsetError,
  collectEntries,
  describeToolset,
  parseConfig,
  splitArgv,
  toEntry,
  UsageError,
} from '../../packages/twylt/src/toolset/index.js';
import { SLEEPER } from '../support/mcp.js';
import { ROOT } from '../support/process.js';
import { runTwylt } from '../support/twylt-cli.js';
import { NO_PYTHON_REASON, noPython, pythonTool } from '../support/python.js';

const dir = mkdtempSync(join(tmpdir(), 'twylt-toolset-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ECHO = [process.execPath, `${ROOT}build/examples/echo/tool.js`];

describe('config files', () => {
  it('resolves cwd against the file’s directory and keeps the other fields', () => {
    const [tool] = parseConfig(JSON.stringify({ tools: [{ command: ['x'], cwd: 'sub', env: { A: '1' }, timeoutMs: 5, name: 'n', transport: 'stdin' }] }), '/etc/tools/tools.json');
    expect(tool).toEqual({ command: ['x'], cwd: '/etc/tools/sub', env: { A: '1' }, timeoutMs: 5, name: 'n', transport: 'stdin' });
    expect(parseConfig('{"$schema": "x", "tools": [{"command": ["x"]}]}', '/etc/tools/tools.json')[0]!.cwd).toBe('/etc/tools');
  });

  it('names every wrong field by its path', () => {
    const wrong = { tools: [{ command: [] }, { command: ['x', ''], env: { A: 1 }, transport: 'pipe', shell: true }] };
    expect(() => parseConfig(JSON.stringify(wrong), 'c.json')).toThrow(
      new ConfigError(
        'c.json is not a valid TWYLT tool-set config:\n' +
          '  tools[0].command: Must have at least 1 item, got []\n' +
          '  tools[1].command[1]: Must have at least 1 character, got ""\n' +
          '  tools[1].env.A: Expected a string, got 1\n' +
          '  tools[1].transport: Expected one of: "cli", "stdin", "file", got "pipe"\n' +
          '  tools[1].shell: Unknown field',
      ),
    );
    expect(() => parseConfig('{"tools": []}', 'c.json')).toThrow('tools: Must have at least 1 item');
    expect(() => parseConfig('{"tool": []}', 'c.json')).toThrow('  tools: Required field is missing\n  tool: Unknown field');
    expect(() => parseConfig('{"tools": [', 'c.json')).toThrow(/^c\.json is not valid JSON: /);
  });

  it('checks every sandbox policy by the rule the flag follows: a malformed host is named, never a silent block', () => {
    const config = {
      sandbox: { allowNet: ['example.com', 'https://api.example.com'] },
      tools: [{ command: ['x'] }, { command: ['y'], sandbox: { allowNet: ['*.example.org:8443', 'a.*.example.com', '[::1'] } }, { command: ['z'], sandbox: true }],
    };
    expect(() => parseConfig(JSON.stringify(config), 'c.json')).toThrow(
      new ConfigError(
        'c.json is not a valid TWYLT tool-set config:\n' +
          '  sandbox.allowNet[1]: takes HOST, HOST:PORT or *.DOMAIN, got "https://api.example.com"\n' +
          '  tools[1].sandbox.allowNet[1]: takes HOST, HOST:PORT or *.DOMAIN, got "a.*.example.com"\n' +
          '  tools[1].sandbox.allowNet[2]: takes HOST, HOST:PORT or *.DOMAIN, got "[::1"',
      ),
    );
    // The forms the flag takes are taken here too.
    const good = { tools: [{ command: ['x'], sandbox: { allowNet: ['example.com', 'api.example.com:8443', '*.example.org', '[::1]:80', '127.0.0.1'] } }] };
    expect(parseConfig(JSON.stringify(good), '/etc/c.json')[0]!.sandbox).toMatchObject({ allowNet: good.tools[0]!.sandbox.allowNet });
  });

  it('twylt inspect refuses such a config too: exit 1, the entry named, nothing served', async () => {
    const file = join(dir, 'bad-host.json');
    writeFileSync(file, JSON.stringify({ tools: [{ command: [...SLEEPER], sandbox: { allowNet: ['example.com/api'] } }] }));
    const result = await runTwylt(['inspect', '--no-open', '--config', file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`twylt inspect: ${file} is not a valid TWYLT tool-set config:\n  tools[0].sandbox.allowNet[0]: takes HOST, HOST:PORT or *.DOMAIN, got "example.com/api"\n`);
  });

  it('reads files in order, then the commands', async () => {
    const file = join(dir, 'tools.json');
    writeFileSync(file, JSON.stringify({ tools: [{ command: ['a'] }] }));
    expect(await collectEntries([file], [['b', '--flag']])).toEqual([{ command: ['a'], cwd: dir }, { command: ['b', '--flag'] }]);
    await expect(collectEntries([join(dir, 'absent.json')], [])).rejects.toThrow(/^cannot read config file .*absent\.json: ENOENT/);
  });
});

describe('command lines', () => {
  it('splits options from the commands after each "--"', () => {
    expect(splitArgv(['--port', '0', '--', 'python3', 't.py', '-v', '--', 'node', 'x.js'])).toEqual({
      options: ['--port', '0'],
      commands: [['python3', 't.py', '-v'], ['node', 'x.js']],
    });
    expect(splitArgv(['--config', 'c.json'])).toEqual({ options: ['--config', 'c.json'], commands: [] });
    expect(() => splitArgv(['--', 'a', '--'])).toThrow('tool 2: nothing follows "--"');
    // A usage error as it is thrown: every command answers it with exit 64, none has to wrap it.
    expect(() => splitArgv(['--', 'a', '--'])).toThrow(UsageError);
  });

  it('takes an argv or an entry in code', () => {
    expect(toEntry(['python3', 't.py'])).toEqual({ command: ['python3', 't.py'] });
    expect(toEntry({ command: ['t'], name: 'n' })).toEqual({ command: ['t'], name: 'n' });
    expect(() => toEntry([])).toThrow(TypeError);
  });
});

describe('describing a tool set', () => {
  it.skipIf(noPython)(`describes every tool at once, under its own name or the entry’s (${noPython ? NO_PYTHON_REASON : 'python3'})`, async () => {
    const tools = await describeToolset([{ command: ECHO }, { command: pythonTool(), name: 'py' }]);
    expect(tools.map((tool) => [tool.name, tool.spec.name])).toEqual([['echo', 'echo'], ['py', 'py_echo']]);
    const { output } = await tools[1]!.runner.call({ text: 'hi', times: 2 });
    expect(output).toEqual({ echo: 'hihi', length: 4, scale: 1 });
  });

  it.skipIf(noPython)(`runs a relative script from the entry’s cwd over every transport, file mode too (${noPython ? NO_PYTHON_REASON : 'python3'})`, async () => {
    const [python] = pythonTool();
    for (const transport of ['cli', 'stdin', 'file'] as const) {
      const [tool] = await describeToolset([{ command: [python!, 'tests/fixtures/python/echo_tool.py'], cwd: ROOT, transport }]);
      const result = await tool!.runner.call({ text: 'rel' });
      expect([result.transport, result.output]).toEqual([transport, { echo: 'rel', length: 3, scale: 1 }]);
    }
  });

  it('names every tool that cannot be served, by its command', async () => {
    const error = await describeToolset([{ command: ECHO }, { command: ['/nonexistent/tool'] }, { command: ECHO }, { command: SLEEPER, name: 'bad name' }], {
      checkName: (name) => (/^\w+$/.test(name) ? undefined : 'only letters, digits and _ are allowed'),
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ToolsetError);
    expect((error as ToolsetError).problems).toEqual([
      expect.stringMatching(/^cannot describe tool \(\/nonexistent\/tool\): cannot run \/nonexistent\/tool: .*ENOENT/),
      `cannot serve "bad name" (${SLEEPER.join(' ')}): only letters, digits and _ are allowed; give it another name with "name" in a config file`,
      `2 tools are named "echo": ${ECHO.join(' ')} and ${ECHO.join(' ')}; rename all but one with "name" in a config file`,
    ]);
  });

  it('describes each distinct entry once with a shared SpecCache', async () => {
    const log = join(dir, 'starts.log');
    const entry = { command: SLEEPER, env: { SLEEPER_LOG: log } };
    const cache = new SpecCache();
    for (let i = 0; i < 3; i++) await describeToolset([entry], { cache });
    await describeToolset([{ ...entry, name: 'renamed' }], { cache });
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);
    cache.clear();
    await describeToolset([entry], { cache });
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(2);
  });
});
