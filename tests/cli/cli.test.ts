/** The built `twylt` command: help, usage errors, describe and call on the Python tool and a TypeScript example. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { styleFor } from '../../packages/twylt/src/cli/style.js';
import { NO_PYTHON_REASON, noPython, pythonTool } from '../support/python.js';
import { repoRoot, runTwylt, tsRuntime } from '../support/twylt-cli.js';

const ANSI = /\x1b\[/;

describe('help and usage', () => {
  it('prints help for the command and every subcommand', async () => {
    const top = await runTwylt(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/^twylt: describe, call and check any TWYLT executable/);
    for (const name of ['describe', 'call', 'check']) {
      expect(top.stdout).toContain(`  ${name}`);
      const sub = await runTwylt([name, '--help']);
      expect(sub.code, name).toBe(0);
      expect(sub.stdout).toContain(`twylt ${name} [`);
    }
  });

  it('exits 64 with a clear message for usage errors', async () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /Usage:/],
      [['frobnicate'], /unknown command "frobnicate"/],
      [['describe'], /no tool command given: put it after "--"/],
      [['describe', '--mode', 'full', '--', 'x'], /--mode must be one of brief, schema, requirements, few_shots, json_spec; got "full"/],
      [['call', '--input', '{', '--', 'x'], /the input from --input is not JSON/],
      [['call', '--input', '[1]', '--', 'x'], /must be a JSON object/],
      [['call', '--input', '{}', '--input-file', 'f', '--', 'x'], /not both/],
      [['call', '--transport', 'carrier-pigeon', '--input', '{}', '--', 'x'], /--transport must be one of cli, stdin, file/],
      [['call', '--timeout', 'soon', '--input', '{}', '--', 'x'], /--timeout takes a whole number of milliseconds/],
      [['check', '--verbose', '--', 'x'], /Unknown option '--verbose'/],
    ];
    for (const [args, message] of cases) {
      const run = await runTwylt(args);
      expect(run.code, args.join(' ')).toBe(64);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    }
  });

  it('exits 1 with a message when the tool cannot be started', async () => {
    const run = await runTwylt(['describe', '--', '/nonexistent/tool']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^SpawnError: cannot run \/nonexistent\/tool/);
  });

  it('colours only a terminal, and never with NO_COLOR', () => {
    expect(styleFor({ isTTY: true }, {}).red('x')).toBe('\x1b[31mx\x1b[39m');
    expect(styleFor({ isTTY: true }, { NO_COLOR: '1' }).red('x')).toBe('x');
    expect(styleFor({ isTTY: false }, {}).red('x')).toBe('x');
    expect(styleFor({}, {}).enabled).toBe(false);
  });
});

describe.skipIf(noPython)(`on the foreign Python tool (${noPython ? NO_PYTHON_REASON : 'python3 found'})`, () => {
  // A relative script path works: twylt resolves it against its own working directory.
  const tool = [pythonTool()[0]!, join('tests', 'fixtures', 'python', 'echo_tool.py')];

  it('describe prints a readable summary', async () => {
    const run = await runTwylt(['describe', '--', ...tool]);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe('py_echo 1.2.0');
    expect(run.stdout).toContain('Requirements: pip (requirements.txt), none');
    expect(run.stdout).toMatch(/^ {2}text \*  string  Text to repeat  \[minLength 1, maxLength 100\]$/m);
    expect(run.stdout).toMatch(/^ {4}prefix \* +string/m); // nested fields, indented
    expect(run.stdout).toMatch(/^ {2}case +"keep" \| "upper" \| "lower"  default "keep"$/m);
    expect(run.stdout).toContain('  1. {"text":"hi"}\n     → {"echo":"hi","length":2,"scale":1}');
    expect(run.stdout).not.toMatch(ANSI);
  });

  it('describe --json and --mode print the raw documents', async () => {
    const json = await runTwylt(['describe', '--json', '--', ...tool]);
    const spec = JSON.parse(json.stdout);
    expect(Object.keys(spec)).toEqual(['format_version', 'name', 'version', 'description', 'requirements', 'inputSchema', 'outputSchema', 'few_shots']);
    const brief = await runTwylt(['describe', '--mode', 'brief', '--env', '--', ...tool]);
    expect(brief.stdout).toBe(`${spec.description}\n`);
    const schema = await runTwylt(['describe', '--mode', 'schema', '--', ...tool]);
    expect(JSON.parse(schema.stdout)).toEqual({ inputSchema: spec.inputSchema, outputSchema: spec.outputSchema });
  });

  it('call prints the output, from --input, --input-file or stdin, over every transport', async () => {
    const inline = await runTwylt(['call', '--input', '{"text": "ab", "times": 2}', '--', ...tool]);
    expect(inline.code).toBe(0);
    expect(inline.stdout).toBe('{\n  "echo": "abab",\n  "length": 4,\n  "scale": 1\n}\n');
    const dir = mkdtempSync(join(tmpdir(), 'twylt-cli-test-'));
    try {
      writeFileSync(join(dir, 'input.json'), '{"text": "from a file"}');
      const file = await runTwylt(['call', '--json', '--input-file', join(dir, 'input.json'), '--', ...tool]);
      expect(file.code).toBe(0);
      expect(JSON.parse(file.stdout)).toEqual({ echo: 'from a file', length: 11, scale: 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    for (const transport of ['stdin', 'file']) {
      const run = await runTwylt(['call', '--transport', transport, '--json', '--', ...tool], { stdin: '{"text": "é"}' });
      expect(run.code, transport).toBe(0);
      expect(run.stdout).toBe('{"echo":"é","length":1,"scale":1}\n');
    }
  });

  it('call exits with the tool\'s code and renders its error readably, or raw with --json', async () => {
    const run = await runTwylt(['call', '--input', '{"text": 5, "loud": true}', '--', ...tool]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'ToolError: Input validation failed (exit 2, stage input)\n' +
        '  • text: Expected a string (invalid_string)  value: 5\n' +
        '  • loud: Unknown field (unknown_field)  value: true\n',
    );
    const raw = await runTwylt(['call', '--json', '--input', '{"describe": "nope"}', '--', ...tool]);
    expect(raw.code).toBe(4);
    expect(JSON.parse(raw.stderr).error).toMatchObject({ type: 'protocol_error', stage: 'describe' });
  });

  it('call --validate rejects input the published schema forbids, before running the tool', async () => {
    const run = await runTwylt(['call', '--validate', '--input', '{"text": "x", "times": 9}', '--', ...tool]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^SchemaMismatchError: input does not match the tool's published inputSchema: \/times must be at most 5 \(got 9\)/);
  });

  it('call exits 1 on a time-out', async () => {
    const run = await runTwylt(['call', '--timeout', '1500', '--input', '{"text": "x"}', '--', ...pythonTool('hang')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^TimeoutError: tool did not finish within 1500 ms and was killed/);
  });
});

describe('on a TypeScript example (run from source)', () => {
  const echo = [...tsRuntime, join(repoRoot, 'examples', 'echo', 'tool.ts')];

  it('describe and call work', async () => {
    const described = await runTwylt(['describe', '--', ...echo]);
    expect(described.code, described.stderr).toBe(0);
    expect(described.stdout.split('\n')[0]).toBe('echo 1.0.0');
    expect(described.stdout).toMatch(/^ {2}text \* +string +Text to repeat/m);
    const called = await runTwylt(['call', '--input', '{"text": "hi"}', '--', ...echo]);
    expect(called.code, called.stderr).toBe(0);
    expect(JSON.parse(called.stdout)).toEqual({ text: 'hi' });
    const failed = await runTwylt(['call', '--json', '--input', '{"text": 1}', '--', ...echo]);
    expect(failed.code).toBe(2);
    expect(JSON.parse(failed.stderr).error.errors[0]).toMatchObject({ path: 'text', code: 'invalid_string' });
  });
});
