/**
 * `twylt build --executable --runtime bun` in an ordinary project: a package.json with more
 * dependencies than the tool imports, installed in node_modules. The executable publishes the
 * requirements the tool's source publishes (what it imports, at the installed versions),
 * and a self-check that fails names the JSON paths that differ instead of printing the spec.
 * Bun comes from scripts/runtimes.mjs; without it the tests are skipped, saying so.
 */
import { mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, run } from '../support/process.js';
import { TS_RUNTIME, runtimeBinary, runtimeMissing } from '../support/runtimes.js';
import { freshDir } from './matrix.js';

const CLI = join(ROOT, 'packages/twylt/dist/cli/main.js');
const BUILD_TIMEOUT_MS = 300_000;
const bun = runtimeBinary('bun');
const skipped = bun ? '' : ` (skipped: ${runtimeMissing('bun')})`;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A project whose package.json declares four dependencies, of which the tool imports two (installed: links to the repository's). */
function project(tool: string): string {
  const dir = freshDir();
  dirs.push(dir);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'my-tools', type: 'module', dependencies: { twylt: '^0.1.0', zod: '^4.0.0', yaml: '^2.0.0', 'twylt-mcp': '^0.1.0' } }),
  );
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(join(ROOT, 'packages/twylt'), join(dir, 'node_modules/twylt'), 'dir');
  symlinkSync(join(ROOT, 'node_modules/zod'), join(dir, 'node_modules/zod'), 'dir');
  writeFileSync(join(dir, 'tool.ts'), readFileSync(tool, 'utf8'));
  return dir;
}

const build = (dir: string, out: string) =>
  run([process.execPath, CLI, 'build', 'tool.ts', '-o', out, '--executable', '--runtime', 'bun'], {
    cwd: dir,
    env: { PATH: `${dirname(bun ?? '/nonexistent')}:${process.env.PATH ?? ''}` },
    timeoutMs: BUILD_TIMEOUT_MS,
  });

describe.skipIf(!bun)(`a Bun executable built in a project with dependencies${skipped}`, () => {
  it('is written, and publishes what the tool imports, as its source does', async () => {
    const dir = project(join(ROOT, 'examples/echo/tool.ts'));
    const built = await build(dir, 'dist/echo');
    expect(built.code, built.stderr).toBe(0);
    const zod = (JSON.parse(readFileSync(join(ROOT, 'node_modules/zod/package.json'), 'utf8')) as { version: string }).version;
    const expected = { tool: 'npm', format: 'package.json', content: JSON.stringify({ dependencies: { twylt: '^0.1.0', zod: `^${zod}` } }, null, 2) };
    const ask = ['{"describe": "requirements"}'];
    const [executable, source] = await Promise.all([
      run([join(dir, 'dist/echo'), ...ask], { cwd: freshDir() }),
      run([...TS_RUNTIME, join(dir, 'tool.ts'), ...ask], { cwd: dir }),
    ]);
    expect(source).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(source.stdout)).toEqual(expected);
    expect(executable).toEqual(source);
    const call = await run([join(dir, 'dist/echo'), '{"text": "hi"}'], { cwd: dir });
    expect(call).toMatchObject({ code: 0, stdout: '{\n  "text": "hi"\n}\n', stderr: '' });
  }, BUILD_TIMEOUT_MS);

  it('that describes itself otherwise is refused, naming the field that differs, and nothing is written', async () => {
    const dir = project(join(ROOT, 'tests/build/fixtures/runtime_named.ts'));
    const built = await build(dir, 'dist/tool');
    expect(built.code, built.stderr).toBe(1);
    expect(built.stdout).toBe('');
    expect(built.stderr).toBe(
      'twylt build: The bun executable was built but does not describe the tool as the build did; nothing was written. ' +
        'Its json_spec differs at: $.description (build: "run by Node", ran: "run by Bun")\n',
    );
    expect(readdirSync(join(dir, 'dist'))).toEqual([]);
  }, BUILD_TIMEOUT_MS);
});
