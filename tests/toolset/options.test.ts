/**
 * One option table (toolset/options.ts, ADR 0031): the flags `twylt-mcp` and `twylt inspect`
 * share are parsed by one table, their numbers by one rule in every command (`twylt describe
 * --timeout` included), a usage error exits 64 from every TWYLT command, and each command's
 * --help lists every shared flag, generated from the table. The commands run as processes.
 */
import { describe, expect, it } from 'vitest';
import { BUILT_IN_DEFAULTS, DEFAULT_QUERY_TIMEOUT_MS, MAX_DURATION_MS, SANDBOX_DEFAULTS, SANDBOX_OPTIONS, SEARCH_OPTIONS, TOOLSET_OPTIONS, USAGE_EXIT, formatOptions, optionHelp, parseCount, parseDuration, toolsetOptions } from 'twylt/toolset';
import { CHECK_DEFAULTS } from 'twylt/conformance';
import { DEFAULT_GRACE_MS, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_MAX_QUEUE, DEFAULT_RETRY_MS } from 'twylt-mcp';
import { BRIDGE_CLI } from '../support/mcp.js';
import { run } from '../support/process.js';
import { runTwylt } from '../support/twylt-cli.js';

/** A tool command that is never run: every case is refused before. */
const TOOL = ['--', process.execPath, '-e', ''];

/** The command lines that take `--timeout`, each with what its refusal starts with. */
const COMMANDS: [string, (args: string[]) => Promise<{ code: number | null; stderr: string }>, string][] = [
  ['twylt-mcp', (args) => run([process.execPath, BRIDGE_CLI, ...args]), 'twylt-mcp: '],
  ['twylt inspect', (args) => runTwylt(['inspect', '--no-open', ...args]), 'twylt inspect: '],
  ['twylt describe', (args) => runTwylt(['describe', ...args]), 'twylt describe: '],
  ['twylt call', (args) => runTwylt(['call', '--input', '{}', ...args]), 'twylt call: '],
];

describe('one rule for milliseconds, in every command', () => {
  it.each(COMMANDS)('%s refuses --timeout 1.5, 0, 1e3 and 2^31 alike: exit 64, one line, no stack trace', async (_, command, prefix) => {
    for (const value of ['1.5', '0', '1e3', String(MAX_DURATION_MS + 1)]) {
      const result = await command(['--timeout', value, ...TOOL]);
      expect([result.code, result.stderr.split('\n')[0]], value).toEqual([64, `${prefix}--timeout takes a whole number of milliseconds from 1 to ${MAX_DURATION_MS}; got "${value}"`]);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('twylt-mcp and twylt inspect read every shared number by the same parser', async () => {
    for (const [flag, value, message] of [
      ['--describe-timeout', '2.5', 'takes a whole number of milliseconds from 1'],
      ['--warm', '-1', 'takes a whole number; got "-1"'],
      ['--max-warm', 'many', 'takes a whole number; got "many"'],
    ] as const) {
      for (const [name, command] of COMMANDS.slice(0, 2)) {
        const result = await command([`${flag}=${value}`, ...TOOL]);
        expect([result.code, result.stderr], `${name} ${flag}`).toEqual([64, expect.stringContaining(`${flag} ${message}`)]);
      }
    }
  });

  it('the parsers: whole numbers only, within their range', () => {
    expect(parseDuration('--t', '1500')).toBe(1500);
    expect(parseDuration('--t', '0', 0)).toBe(0);
    expect(parseDuration('--t', String(MAX_DURATION_MS))).toBe(MAX_DURATION_MS);
    for (const text of ['', ' 1', '1.0', '+1', '0x10', '1_000', 'Infinity']) expect(() => parseDuration('--t', text), text).toThrow('--t takes a whole number');
    expect(parseCount('--port', '65535', 0, 65535)).toBe(65535);
    expect(() => parseCount('--port', '65536', 0, 65535)).toThrow('--port takes a whole number from 0 to 65535; got "65536"');
    expect(() => parseCount('--jobs', '0', 1)).toThrow('--jobs takes a whole number of at least 1; got "0"');
  });
});

describe('the table', () => {
  it('turns the flags into one frozen defaults object', () => {
    const defaults = toolsetOptions({ timeout: '1500', 'describe-timeout': '700', warm: '2', 'max-warm': '0', strict: true, config: ['a.json'] });
    expect(defaults).toEqual({ timeoutMs: 1500, describeTimeoutMs: 700, warm: 2, maxWarm: 0 });
    expect(Object.isFrozen(defaults)).toBe(true);
    expect(toolsetOptions({})).toEqual({});
  });

  it.each([
    ['twylt-mcp', () => run([process.execPath, BRIDGE_CLI, '--help'])],
    ['twylt inspect', () => runTwylt(['inspect', '--help'])],
  ])('%s --help lists every shared flag with its help', async (_, help) => {
    const { code, stdout } = await help();
    expect(code).toBe(0);
    for (const [name, spec] of Object.entries(TOOLSET_OPTIONS)) {
      expect(stdout).toMatch(new RegExp(`^ {2}--${name}${'value' in spec ? ` ${spec.value}` : ''}\\s`, 'm'));
      expect(stdout.replace(/\s+/g, ' ')).toContain(spec.help.replace(/\s+/g, ' '));
    }
  });
});

describe('one usage exit code', () => {
  it.each([
    ['twylt-mcp, an unknown flag', () => run([process.execPath, BRIDGE_CLI, '--frobnicate', ...TOOL])],
    ['twylt-mcp, no tool', () => run([process.execPath, BRIDGE_CLI])],
    ['twylt, an unknown flag', () => runTwylt(['inspect', '--frobnicate', ...TOOL])],
  ])('%s: exit 64', async (_, command) => {
    const result = await command();
    expect(result.code).toBe(USAGE_EXIT);
    expect(USAGE_EXIT).toBe(64);
  });
});

describe('each default printed from the constant the code uses (OptionSpec.byDefault)', () => {
  it('a help line is the help, then "(default X; note)", then what follows', () => {
    expect(optionHelp({ type: 'string', help: 'memory of one call', byDefault: 1024, defaultNote: '0: no limit', afterDefault: '; more' })).toBe('memory of one call (default 1024; 0: no limit); more');
    expect(optionHelp({ type: 'string', help: 'a count', byDefault: 4 })).toBe('a count (default 4)');
    expect(optionHelp({ type: 'boolean', help: 'a switch' })).toBe('a switch');
    expect(formatOptions({ jobs: { type: 'string', value: 'N', help: 'runs at once', byDefault: 4 } }, { column: 12 })).toBe('  --jobs N  runs at once (default 4)\n');
  });

  it('no shared table spells a default out in its help', () => {
    for (const [name, spec] of Object.entries({ ...TOOLSET_OPTIONS, ...SANDBOX_OPTIONS, ...SEARCH_OPTIONS })) expect(spec.help, name).not.toMatch(/\(default \d/);
  });

  it.each([
    ['twylt-mcp', () => run([process.execPath, BRIDGE_CLI, '--help']), [
      ['--timeout MS', BUILT_IN_DEFAULTS.timeoutMs], ['--max-warm N', BUILT_IN_DEFAULTS.maxWarm], ['--sandbox-memory MB', SANDBOX_DEFAULTS.memoryMb],
      ['--describe-retry-ms MS', DEFAULT_RETRY_MS], ['--max-output-bytes N', BUILT_IN_DEFAULTS.maxOutputBytes], ['--warm-idle-ms MS', BUILT_IN_DEFAULTS.warmIdleMs],
      ['--max-queue N', DEFAULT_MAX_QUEUE], ['--max-message-bytes N', DEFAULT_MAX_MESSAGE_BYTES], ['--max-body-bytes N', DEFAULT_MAX_BODY_BYTES], ['--grace-ms MS', DEFAULT_GRACE_MS],
      ['--search-timeout-ms MS', DEFAULT_QUERY_TIMEOUT_MS],
    ]],
    ['twylt check', () => runTwylt(['check', '--help']), [['--timeout MS', CHECK_DEFAULTS.timeoutMs], ['--concurrency N', CHECK_DEFAULTS.concurrency], ['--sandbox-cpu-seconds S', SANDBOX_DEFAULTS.cpuSeconds]]],
    ['twylt scan', () => runTwylt(['scan', '--help']), [['--timeout MS', BUILT_IN_DEFAULTS.timeoutMs], ['--sandbox-processes N', SANDBOX_DEFAULTS.processes]]],
    ['twylt call', () => runTwylt(['call', '--help']), [['--timeout MS', BUILT_IN_DEFAULTS.timeoutMs]]],
  ] as const)('%s --help prints the defaults its code uses', async (_, help, expected) => {
    const { code, stdout } = await help();
    expect(code).toBe(0);
    for (const [flag, value] of expected) {
      // The flag's paragraph, from its line to the next flag's.
      const paragraph = new RegExp(`^ {2}${flag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\s[^\\n]*(?:\\n {3,}[^\\n]*)*)`, 'm').exec(stdout)?.[1]?.replace(/\s+/g, ' ');
      expect(paragraph, flag).toContain(`(default ${value}`);
    }
  });
});
