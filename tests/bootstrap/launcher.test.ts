/**
 * The launcher (`runToolFile` from twylt/bootstrap) as a real process: docs/TWYLT.md section 6.
 * Build first: `npm run build -w twylt` (the launchers import the built package).
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, example, ROOT, run, type Finished } from '../support/process.js';
import { FIXTURES, loadedSourceModules, NODE_TSX, sandbox, TRACE, traced, type Sandbox } from './sandbox.js';

const NEEDS_DEP = join(FIXTURES, 'needs-dep');
const DEFINE_TOOL = join(FIXTURES, 'define-tool');

const SHOUT_REQUIREMENTS = {
  tool: 'npm',
  format: 'package.json',
  content: '{"dependencies":{"bootstrap-fixture-dep":"1.0.0","twylt":"0.1.0","zod":"4.6.7"}}',
};
const SHOUT_STATIC_SPEC = {
  format_version: '1.8',
  name: 'shout',
  version: '2.1.0',
  description: 'Upper-case the text — with a dependency that may be missing.',
  requirements: SHOUT_REQUIREMENTS,
  inputSchema: {},
  outputSchema: {},
  few_shots: [{ input: { text: 'hi' }, output: { text: 'HI!' } }],
};
/**
 * define-tool/tool.mjs declares no requirements: the packages it imports stand in, at the
 * installed version where one is (the repository's zod and twylt), else at the range its
 * package.json declares.
 */
const defineToolRequirements = (zod: string) => ({
  tool: 'npm',
  format: 'package.json',
  content: JSON.stringify({ dependencies: { 'bootstrap-fixture-dep': '1.0.0', twylt: '^0.1.0', zod } }, null, 2),
});
const DEFINE_TOOL_REQUIREMENTS = defineToolRequirements('^4.6.7');
/** In a sandbox without zod installed. */
const DEFINE_TOOL_REQUIREMENTS_NO_ZOD = defineToolRequirements('4.6.7');

type Transport = 'cli' | 'stdin' | 'env';
const TRANSPORTS: Transport[] = ['cli', 'stdin', 'env'];

/** Asks `mode` through one transport. */
function ask(argv: string[], mode: string, transport: Transport, cwd?: string): Promise<Finished> {
  const payload = JSON.stringify({ describe: mode });
  if (transport === 'cli') return run([...argv, payload], { cwd });
  if (transport === 'stdin') return run(argv, { input: payload, cwd });
  return run(argv, { env: { INPUT_DESCRIBE: mode }, cwd });
}

function json(result: Finished): unknown {
  expect(result.stdout.endsWith('}\n') || result.stdout.endsWith(']\n'), result.stdout).toBe(true);
  return JSON.parse(result.stdout);
}

describe('a tool whose business dependency is not installed', () => {
  const launcher = [...NODE_TSX, join(NEEDS_DEP, 'launcher.mjs')];

  it('answers requirements and json_spec from its source, through every transport, exit 0', async () => {
    // requirements never imports the tool, so this launcher needs no TypeScript loader either.
    const plain = [process.execPath, join(NEEDS_DEP, 'launcher.mjs')];
    for (const transport of TRANSPORTS) {
      const requirements = await ask(plain, 'requirements', transport);
      expect(requirements, transport).toMatchObject({ code: 0, stderr: '' });
      expect(json(requirements)).toEqual(SHOUT_REQUIREMENTS);

      const spec = await ask(launcher, 'json_spec', transport);
      expect(spec, transport).toMatchObject({ code: 0, stderr: '' });
      // Exact text: key order and two-space indentation of docs/TWYLT.md sections 2 and 5.
      expect(spec.stdout).toBe(`${JSON.stringify(SHOUT_STATIC_SPEC, null, 2)}\n`);
    }
  });

  it('fails natively on normal execution and other describe modes, with the tool’s own missing-module error', async () => {
    const missing = /Error \[ERR_MODULE_NOT_FOUND\]: Cannot find package 'bootstrap-fixture-dep' imported from .*needs-dep\/tool\.ts/;
    const direct = await run([...NODE_TSX, join(NEEDS_DEP, 'tool.ts'), '{"text": "hi"}']);
    expect(direct.code).toBe(1);
    expect(direct.stderr).toMatch(missing);
    for (const payload of ['{"text": "hi"}', '{"describe": "schema"}']) {
      const viaLauncher = await run([...launcher, payload]);
      expect(viaLauncher, payload).toMatchObject({ code: 1, stdout: '' });
      expect(viaLauncher.stderr).toMatch(missing);
    }
  });

  it('a defineTool tool in JavaScript: default requirements from its imports, non-literal fields at their defaults', async () => {
    const js = [process.execPath, join(DEFINE_TOOL, 'launcher.mjs')];
    expect(json(await run([...js, '{"describe": "requirements"}']))).toEqual(DEFINE_TOOL_REQUIREMENTS);
    const spec = await run(js, { env: { INPUT_DESCRIBE: 'json_spec' } });
    expect(spec).toMatchObject({ code: 0, stderr: '' });
    expect(json(spec)).toEqual({
      format_version: '1.8',
      name: 'shout_js',
      version: '0.3.0',
      description: '',
      requirements: DEFINE_TOOL_REQUIREMENTS,
      inputSchema: {},
      outputSchema: {},
      few_shots: [{ input: { text: 'a' }, output: { text: 'A!' } }],
    });
  });

  it('says on stderr what it could not read, with --debug or TWYLT_DEBUG only', async () => {
    const js = [process.execPath, join(DEFINE_TOOL, 'launcher.mjs')];
    const notes = [
      `twylt bootstrap: ${join(DEFINE_TOOL, 'tool.mjs')}:12:16: description of defineTool(...) is not a literal (a template string with substitutions)`,
      `twylt bootstrap: ${join(DEFINE_TOOL, 'tool.mjs')}: requirements not declared; derived from what its code imports`,
    ];
    const flagged = await run([...js, '--debug', '{"describe": "json_spec"}']);
    expect(flagged.code).toBe(0);
    expect(flagged.stderr.split('\n').filter(Boolean)).toEqual(notes);
    const fromEnv = await run(js, { env: { INPUT_DESCRIBE: 'requirements', TWYLT_DEBUG: 'yes' } });
    expect(fromEnv.stderr).toContain(notes[0]);
    expect(fromEnv.stdout).toBe((await run([...js, '{"describe": "requirements"}'])).stdout);
  });
});

describe('with the dependency installed, the launcher answers as the tool itself', () => {
  let ts: Sandbox;
  let js: Sandbox;
  beforeAll(() => {
    ts = sandbox({ fixture: 'needs-dep', twylt: 'link', zod: true, dependency: true });
    js = sandbox({ fixture: 'define-tool', twylt: 'link', zod: true, dependency: true });
  });
  afterAll(() => {
    ts?.remove();
    js?.remove();
  });

  it('requirements and json_spec through every transport, and a mode the tool answers alone (JavaScript tool)', async () => {
    const launcher = [process.execPath, join(js.dir, 'launcher.mjs')];
    const tool = [process.execPath, join(js.dir, 'tool.mjs')];
    const asks: [string, Transport][] = [
      ['schema', 'stdin'],
      ...['requirements', 'json_spec'].flatMap((mode) => TRANSPORTS.map((transport): [string, Transport] => [mode, transport])),
    ];
    for (const [mode, transport] of asks) {
      const [own, launched] = await Promise.all([ask(tool, mode, transport, js.dir), ask(launcher, mode, transport, js.dir)]);
      expect(own, `${mode} ${transport}`).toMatchObject({ code: 0, stderr: '' });
      expect(launched, `${mode} ${transport}`).toEqual(own);
    }
    // The tool's own default requirements are the launcher's: its imports, at the versions installed in the sandbox.
    const installed = JSON.stringify({ dependencies: { 'bootstrap-fixture-dep': '^1.0.0', twylt: '^0.1.0', zod: '^4.6.7' } }, null, 2);
    expect(json(await run([...launcher, '{"describe": "requirements"}'], { cwd: js.dir }))).toEqual({ ...DEFINE_TOOL_REQUIREMENTS, content: installed });
  });

  it('requirements and json_spec of a TypeScript tool', async () => {
    const own = await ask([...NODE_TSX, join(ts.dir, 'tool.ts')], 'json_spec', 'cli', ts.dir);
    expect(own).toMatchObject({ code: 0, stderr: '' });
    expect(await ask([...NODE_TSX, join(ts.dir, 'launcher.mjs')], 'json_spec', 'cli', ts.dir)).toEqual(own);
    // The loaded tool publishes real schemas: the static fallback is not in play.
    const spec = json(own) as Record<string, any>;
    expect(spec.inputSchema).toMatchObject({ type: 'object', $id: 'ShoutInput', 'x-schema-version': '1.0.0' });
    const requirements = await ask([process.execPath, join(ts.dir, 'launcher.mjs')], 'requirements', 'cli', ts.dir);
    expect(json(requirements)).toEqual(spec.requirements);
  });

  it('normal execution: stdin read by the launcher reaches the tool unchanged; CLI and file mode work too', async () => {
    const launcher = [process.execPath, join(js.dir, 'launcher.mjs')];
    const viaStdin = await run(launcher, { input: '  {"text": "héllo"}\n', cwd: js.dir });
    expect(viaStdin).toMatchObject({ code: 0, stderr: '', stdout: '{\n  "text": "HÉLLO!"\n}\n' });
    // Stdin a regular file: the launcher reads fd 0 itself and hands the bytes over.
    writeFileSync(join(js.dir, 'stdin.json'), '{"text": "file on stdin"}');
    const fd = openSync(join(js.dir, 'stdin.json'), 'r');
    const viaFile = spawnSync(launcher[0]!, launcher.slice(1), { cwd: js.dir, stdio: [fd, 'pipe', 'pipe'], encoding: 'utf8' });
    closeSync(fd);
    rmSync(join(js.dir, 'stdin.json'));
    expect(viaFile).toMatchObject({ status: 0, stderr: '', stdout: '{\n  "text": "FILE ON STDIN!"\n}\n' });
    // A null describe is dropped before validation, as in the tool.
    const viaCli = await run([...launcher, '{"text": "a", "describe": null}'], { cwd: js.dir });
    expect(viaCli).toMatchObject({ code: 0, stdout: '{\n  "text": "A!"\n}\n' });

    writeFileSync(join(js.dir, 'input.json'), '{"text": "file"}');
    const fileMode = await run(launcher, { cwd: js.dir });
    expect(fileMode).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(readFileSync(join(js.dir, 'output.json'), 'utf8')).toBe('{\n  "text": "FILE!"\n}');
    rmSync(join(js.dir, 'input.json'));
    rmSync(join(js.dir, 'output.json'));
  });

  it('an integer a double cannot hold is refused as by the tool itself (CLI, stdin, input.json)', async () => {
    const launcher = [process.execPath, join(js.dir, 'launcher.mjs')];
    const payload = '{"text": "a", "id": 9007199254740993}';
    const refusedOn = (result: Finished, where: string) => {
      expect(result.code).toBe(4);
      expect(errorOf(result).exception).toMatchObject({ type: 'InexactInteger', message: expect.stringContaining(`The JSON on ${where} has the integer 9007199254740993 at id,`) });
    };
    refusedOn(await run([...launcher, payload], { cwd: js.dir }), 'the command-line argument');
    refusedOn(await run(launcher, { input: payload, cwd: js.dir }), 'stdin');
    writeFileSync(join(js.dir, 'input.json'), payload);
    try {
      refusedOn(await run(launcher, { cwd: js.dir }), 'input.json');
      expect(existsSync(join(js.dir, 'output.json'))).toBe(false);
    } finally {
      rmSync(join(js.dir, 'input.json'));
    }
  });

  it('default requirements from a malformed package.json: the same describe error from both', async () => {
    const bad = sandbox({ fixture: 'define-tool', twylt: 'link', zod: true, dependency: true });
    try {
      writeFileSync(join(bad.dir, 'package.json'), '{"type": "module", "dependencies": ["zod"]}');
      const ask = ['{"describe": "json_spec"}'];
      const own = await run([process.execPath, join(bad.dir, 'tool.mjs'), ...ask], { cwd: bad.dir });
      expect(errorOf(own)).toMatchObject({ stage: 'describe', exception: { type: 'InvalidPackageJson' } });
      expect(own.code).toBe(4);
      // The launcher's static requirements derive the same default, and fail the same way.
      const launched = await run([process.execPath, join(bad.dir, 'launcher.mjs'), '{"describe": "requirements"}'], { cwd: bad.dir });
      expect(launched).toEqual(own);
    } finally {
      bad.remove();
    }
  });

  it('errors, service options and INPUT_DESCRIBE in file mode are the tool’s own', async () => {
    const launcher = [process.execPath, join(js.dir, 'launcher.mjs')];
    const tool = [process.execPath, join(js.dir, 'tool.mjs')];
    const cases: [string[], Record<string, string>, string?][] = [
      [['{"describe": 1}', '--error-format', 'human'], {}],
      [['{"describe": "requirements"'], { INPUT_DESCRIBE: 'requirements' }],
      [[], { INPUT_DESCRIBE: 'requirements' }, '[1]'],
      [['--error-format=xml', '{"describe": "requirements"}'], {}],
      [['--version'], { INPUT_DESCRIBE: 'requirements' }, '{"describe": "json_spec"}'],
      [['not-a-payload'], { INPUT_DESCRIBE: 'requirements' }, '   '],
    ];
    for (const [argv, env, input] of cases) {
      const label = JSON.stringify([argv, env, input]);
      const [own, launched] = await Promise.all([
        run([...tool, ...argv], { env, input, cwd: js.dir }),
        run([...launcher, ...argv], { env, input, cwd: js.dir }),
      ]);
      expect(launched, label).toEqual(own);
    }
  });
});

describe('a payload the launcher read', () => {
  let box: Sandbox;
  beforeAll(() => {
    box = sandbox({ fixture: 'parse-counter', twylt: 'link' });
  });
  afterAll(() => box?.remove());

  it('is parsed once in the process: the launcher hands the parsed request to the tool (CLI and stdin)', async () => {
    const launcher = [process.execPath, join(box.dir, 'launcher.mjs')];
    const payload = JSON.stringify({ marker: 'parse-counter-marker', items: [1, 2, 3] });
    for (const c of [{ args: [payload] }, { input: payload }, { input: `  ${payload}\n` }]) {
      const result = await run([...launcher, ...(c.args ?? [])], { cwd: box.dir, input: c.input });
      expect(result, JSON.stringify(c)).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(result.stdout), JSON.stringify(c)).toEqual({ parses: 1 });
    }
    // A describe request on stdin is answered by the loaded tool from the same parse.
    const described = await run(launcher, { cwd: box.dir, input: '{"describe": "few_shots", "marker": "parse-counter-marker"}' });
    expect(described).toMatchObject({ code: 0, stdout: '[]\n', stderr: '' });
    // Unreadable input still reaches the tool, which reports it itself.
    const malformed = await run(launcher, { cwd: box.dir, input: '{"marker": "parse-counter-marker"' });
    expect(malformed.code).toBe(4);
    expect(errorOf(malformed)).toMatchObject({ type: 'protocol_error', stage: 'transport' });
  });
});

describe('requirements the source does not show', () => {
  it('are asked of the tool when it loads, else the default stands in', async () => {
    const computed = join(FIXTURES, 'computed-requirements');
    const missing = await run([process.execPath, join(computed, 'launcher.mjs'), '--debug'], { env: { INPUT_DESCRIBE: 'requirements' } });
    expect(missing.code).toBe(0);
    // What it imports: twylt and zod as installed in the repository, the missing package at its package.json's range, else *.
    const content = JSON.stringify({ dependencies: { 'bootstrap-fixture-dep': '*', twylt: '^0.1.0', zod: '^4.6.7' } }, null, 2);
    expect(json(missing)).toEqual({ tool: 'npm', format: 'package.json', content });
    expect(missing.stderr).toBe(`twylt bootstrap: ${join(computed, 'tool.mjs')}:14:14: requirements of class Computed is not a literal (a call)\n`);

    const box = sandbox({ fixture: 'computed-requirements', twylt: 'link', zod: true, dependency: true });
    try {
      const ask = ['{"describe": "requirements"}'];
      const own = await run([process.execPath, join(box.dir, 'tool.mjs'), ...ask], { cwd: box.dir });
      expect(json(own)).toMatchObject({ content: '{"dependencies":{"bootstrap-fixture-dep":"1.0.0","zod":"4.6.7"}}' });
      expect(await run([process.execPath, join(box.dir, 'launcher.mjs'), ...ask], { cwd: box.dir })).toEqual(own);
    } finally {
      box.remove();
    }
  });
});

describe('twylt installed, zod and every other dependency absent', () => {
  let box: Sandbox;
  let traceDir: string;
  beforeAll(() => {
    box = sandbox({ fixture: 'define-tool', twylt: 'copy' });
    traceDir = mkdtempSync(join(tmpdir(), 'twylt-trace-'));
  });
  afterAll(() => {
    box?.remove();
    if (traceDir) rmSync(traceDir, { recursive: true, force: true });
  });

  async function traceRun(name: string, payload: string): Promise<{ result: Finished; loaded: string[] }> {
    const file = join(traceDir, `${name}.txt`);
    const result = await run([process.execPath, ...TRACE, join(box.dir, 'launcher.mjs'), payload], {
      cwd: box.dir,
      env: { TWYLT_TRACE_FILE: file },
    });
    return { result, loaded: traced(file) };
  }

  it('answers requirements, loading nothing but twylt/bootstrap and the parser', async () => {
    expect(existsSync(join(box.dir, 'node_modules/zod'))).toBe(false);
    const { result, loaded } = await traceRun('requirements', '{"describe": "requirements"}');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(json(result)).toEqual(DEFINE_TOOL_REQUIREMENTS_NO_ZOD);

    const ours = loaded.filter((url) => url.includes('/node_modules/twylt/dist/'));
    expect(ours.some((url) => url.endsWith('/dist/bootstrap/index.js'))).toBe(true); // the trace works
    expect(loaded.some((url) => url.includes('/@babel/parser/'))).toBe(true);
    // Bootstrap, the protocol constants, the run-loop modules it shares (options, hand-offs, stdin, the payload reader) and the default requirements (requirements/, ADR 0041); no runtime, no schemas.
    const modules = loadedSourceModules(ours);
    expect(modules).toContain('bootstrap/run-tool-file.ts'); // the bundle's module markers are read
    const dirs = new Set(modules.map((path) => path.replace(/\/.*/, '')));
    expect([...dirs].sort()).toEqual(['bootstrap', 'protocol', 'requirements', 'tool']);
    expect(modules.filter((path) => path.startsWith('tool/'))).toEqual(['tool/hooks.ts', 'tool/options.ts', 'tool/stdin.ts', 'tool/transport.ts']);
    expect(loaded.filter((url) => url.includes('zod') || url.endsWith('/tool.mjs'))).toEqual([]);
  });

  it('answers json_spec with {} schemas: loading the tool fails for the missing zod', async () => {
    const { result, loaded } = await traceRun('json_spec', '{"describe": "json_spec"}');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(json(result)).toMatchObject({ name: 'shout_js', requirements: DEFINE_TOOL_REQUIREMENTS_NO_ZOD, inputSchema: {}, outputSchema: {} });
    expect(loaded.some((url) => url.endsWith('/tool.mjs'))).toBe(true); // it did try the tool
  });

  it('with zod available, requirements still never loads it', async () => {
    const file = join(traceDir, 'repository.txt');
    const result = await run([process.execPath, ...TRACE, join(DEFINE_TOOL, 'launcher.mjs'), '{"describe": "requirements"}'], {
      env: { TWYLT_TRACE_FILE: file },
    });
    expect(result.code).toBe(0);
    expect(existsSync(join(ROOT, 'node_modules/zod/package.json'))).toBe(true);
    const loaded = traced(file);
    expect(loaded.length).toBeGreaterThan(0);
    expect(loaded.filter((url) => url.includes('/zod/'))).toEqual([]);
    const modules = loadedSourceModules(loaded);
    expect(modules).toContain('bootstrap/run-tool-file.ts'); // the bundle's module markers are read
    expect(modules.filter((path) => path.startsWith('schema/') || path === 'tool/run.ts')).toEqual([]);
  });
});

describe('a tool that fails to load for another reason', () => {
  const broken = [process.execPath, join(FIXTURES, 'broken/launcher.mjs')];

  it('json_spec: a normalized describe error, exit 4, no stack trace unless asked', async () => {
    const result = await run([...broken, '{"describe": "json_spec"}']);
    expect(result).toMatchObject({ code: 4, stdout: '' });
    expect(errorOf(result)).toEqual({
      type: 'protocol_error',
      source: 'twylt',
      stage: 'describe',
      message: 'Failed to process describe request',
      exception: { type: 'RangeError', message: 'the configuration is incomplete' },
    });

    const human = await run([...broken, '--error-format', 'human'], { env: { INPUT_DESCRIBE: 'json_spec' } });
    expect(human).toMatchObject({ code: 4, stdout: '', stderr: 'Failed to process describe request: RangeError: the configuration is incomplete\n' });

    const debug = await run([...broken, '--debug'], { input: '{"describe": "json_spec"}' });
    const error = errorOf(debug);
    expect(Object.keys(error).at(-1)).toBe('traceback');
    expect(error.traceback).toMatch(/^RangeError: the configuration is incomplete\n\s+at .*broken\/tool\.mjs:9/);
  });

  it('requirements are still answered from the source, since the tool is not loaded', async () => {
    const result = await run([...broken, '{"describe": "requirements"}']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(json(result)).toMatchObject({ tool: 'npm', format: 'package.json' });
  });

  it('normal execution fails natively', async () => {
    const result = await run([...broken, '{}']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('RangeError: the configuration is incomplete');
  });

  it('a launcher pointing at a missing file: a describe error naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'twylt-launcher-'));
    try {
      writeFileSync(
        join(dir, 'launcher.mjs'),
        `import { runToolFile } from ${JSON.stringify(join(ROOT, 'packages/twylt/dist/bootstrap/index.js'))};\nawait runToolFile(${JSON.stringify(join(dir, 'gone.ts'))});\n`,
      );
      for (const mode of ['requirements', 'json_spec']) {
        const result = await run([process.execPath, join(dir, 'launcher.mjs')], { env: { INPUT_DESCRIBE: mode } });
        expect(result, mode).toMatchObject({ code: 4, stdout: '' });
        expect(errorOf(result)).toMatchObject({
          stage: 'describe',
          exception: { type: 'ToolFileUnreadable', message: `Cannot read the tool file ${join(dir, 'gone.ts')}: ENOENT` },
        });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('examples/list_directory/launcher.mjs', () => {
  it('answers requirements and json_spec exactly as the tool itself', async () => {
    const own = example('list_directory');
    const launcher = join(ROOT, 'examples/list_directory/launcher.mjs');
    const answers = [
      ['requirements', [process.execPath, launcher]],
      ['json_spec', [...NODE_TSX, launcher]],
    ] as const;
    for (const [mode, argv] of answers) {
      const expected = await ask(own, mode, 'cli');
      expect(expected, mode).toMatchObject({ code: 0, stderr: '' });
      expect(await ask([...argv], mode, 'cli'), mode).toEqual(expected);
    }
  });
});
