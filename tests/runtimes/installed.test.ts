/**
 * Every runtime of the matrix, from a project that installed the packed tarballs as a user
 * does (the README's route): the quick-start echo tool run from its `.ts` source, natively
 * (Node 22.18+ strips types, Bun and Deno run TypeScript), answers exactly as the same source
 * run on Node 20 through tsx; and `twylt call`, `twylt-mcp` and `twylt-mcp --http`, run by
 * that runtime, call the Python tool. One install serves every runtime: this file runs in
 * the main suite, not in the per-runtime subset.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUICK_START_CALLS, casesNamed, observe } from '../build/matrix.js';
import { blocksUnder, readDoc } from '../docs/markdown.js';
import { textOf, startBridge } from '../support/mcp.js';
import { startHttpBridge } from '../support/mcp-http.js';
import { ROOT, run } from '../support/process.js';
import { NO_PYTHON_REASON, noPython, pythonTool } from '../support/python.js';
import { RUNTIME_NAMES, runtimeArgv, runtimeBinary, runtimeMissing } from '../support/runtimes.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'twylt-installed-')));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const project = join(scratch, 'my-tool');
const npmEnv = { npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

beforeAll(() => {
  const packs = join(scratch, 'packs');
  mkdirSync(packs);
  mkdirSync(project);
  const npm = (args: string[], cwd: string) => execFileSync('npm', args, { cwd, env: { ...process.env, ...npmEnv }, stdio: ['ignore', 'ignore', 'pipe'] });
  npm(['pack', '--workspaces', '--pack-destination', packs], ROOT);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-tool', private: true, type: 'module' }));
  const tarballs = readdirSync(packs).filter((name) => /^twylt(-mcp)?-\d.*\.tgz$/.test(name)).map((name) => join(packs, name));
  const pinned = (name: string) => `${name}@${JSON.parse(execFileSync('npm', ['ls', name, '--json', '--depth=0'], { cwd: ROOT, encoding: 'utf8' })).dependencies[name].version}`;
  npm(['install', ...tarballs, pinned('zod'), pinned('tsx')], project);
  // The README's quick start, as a user saves it.
  writeFileSync(join(project, 'echo.ts'), blocksUnder(readDoc('README.md'), 'Quick start: write a tool', 'ts')[0]!.body);
}, 300_000);

/** The cases the issue names: json_spec, a non-ASCII call, invalid input, stdin, file mode, INPUT_DESCRIBE. */
const CASES = casesNamed([
  ...QUICK_START_CALLS,
  'malformed stdin JSON',
  'describe json_spec on the CLI',
  ...['brief', 'schema', 'requirements', 'few_shots', 'json_spec'].map((mode) => `describe ${mode} through INPUT_DESCRIBE`),
]);

/**
 * JSON where a stream holds JSON (line by line for stderr), text otherwise: "identical after
 * JSON parsing". The one thing in the engine's words is a malformed JSON's detail (V8: "Unexpected
 * end of JSON input", JavaScriptCore: "JSON Parse error: Unexpected EOF"): compared as present.
 */
function parsed(observed: Awaited<ReturnType<typeof observe>>) {
  const json = (text: string | null) => {
    if (text === null || text === '') return text;
    try {
      return JSON.parse(text.replace(/(Malformed JSON on [\w.]+: )[^"]+/, '$1<the engine\'s words>'));
    } catch {
      return text;
    }
  };
  return { code: observed.code, stdout: json(observed.stdout), stderr: observed.stderr.split('\n').map(json), outputJson: json(observed.outputJson) };
}

const reference = new Map<string, ReturnType<typeof parsed>>();
/** The same source on Node 20 (the Node running the tests) through the project's tsx. */
async function tsxAnswer(name: string) {
  if (!reference.has(name)) reference.set(name, parsed(await observe([process.execPath, '--import', join(project, 'node_modules/tsx/dist/esm/index.mjs'), join(project, 'echo.ts')], CASES[name]!)));
  return reference.get(name)!;
}

for (const runtime of RUNTIME_NAMES) {
  const missing = runtimeBinary(runtime) === undefined ? runtimeMissing(runtime) : undefined;
  describe.skipIf(missing !== undefined)(`${runtime}${missing ? `: skipped, ${missing}` : ''}`, () => {
    it('runs the quick-start echo.ts from source, answering as Node 20 through tsx does', async () => {
      for (const name of Object.keys(CASES)) {
        const native = parsed(await observe([...runtimeArgv(runtime), join(project, 'echo.ts')], CASES[name]!));
        expect(native, name).toEqual(await tsxAnswer(name));
      }
    }, 240_000);

    const cli = (bin: string) => [...runtimeArgv(runtime), join(project, 'node_modules', bin)];
    const skipPython = noPython ? NO_PYTHON_REASON : undefined;
    it.skipIf(skipPython !== undefined)(`twylt call, twylt-mcp and twylt-mcp --http call the Python tool${skipPython ? ` (${skipPython})` : ''}`, async () => {
      const python = pythonTool();
      const expected = { echo: 'héllo ✓', length: 7, scale: 1 };
      const called = await run([...cli('twylt/dist/cli/main.js'), 'call', '--input', '{"text": "héllo ✓"}', '--', ...python], { cwd: project });
      expect(called.code, called.stderr).toBe(0);
      expect(JSON.parse(called.stdout)).toEqual(expected);

      // `--` first: Bun drops a leading `--` after the script, twylt-mcp puts it back.
      const stdio = await startBridge(['--', ...python], {}, cli('twylt-mcp/dist/cli.js'));
      try {
        const result = await stdio.client.callTool({ name: 'py_echo', arguments: { text: 'héllo ✓' } });
        expect(JSON.parse(textOf(result))).toEqual(expected);
      } finally {
        await stdio.close();
      }

      const http = await startHttpBridge(['--', ...python], {}, cli('twylt-mcp/dist/cli.js'));
      try {
        const client = await http.connect();
        const result = await client.callTool({ name: 'py_echo', arguments: { text: 'héllo ✓' } });
        expect(JSON.parse(textOf(result))).toEqual(expected);
      } finally {
        await http.stop();
      }
    }, 120_000);
  });
}
