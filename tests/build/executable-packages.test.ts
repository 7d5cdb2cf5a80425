/**
 * `twylt build --executable` of a tool that uses the most-used npm packages (yaml, semver,
 * chalk, commander, date-fns, uuid, lodash, zod: devDependencies of the repository, pinned,
 * so that `npm ci` installs them), in a project of its own: the binary answers as the
 * unbuilt tool. Issue 36: `yaml` does `require('process')`, and a built-in named without
 * `node:` was refused as a module "from disk". Not among them: undici, which loads
 * node:http, and Node's snapshot builder cannot hold node:http (Node 20: `methods.toSorted
 * is not a function`; 22 and later abort, "global handle not serialized").
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, run } from '../support/process.js';
import { TS_RUNTIME } from '../support/runtimes.js';
import { freshDir } from './matrix.js';

const CLI = join(ROOT, 'packages/twylt/dist/cli/main.js');
const PACKAGES = ['chalk', 'commander', 'date-fns', 'lodash', 'semver', 'uuid', 'yaml', 'zod'];
const dir = freshDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The repository's installed copy of `name` (a nested one where the root holds another version). */
const installed = (name: string) => join(ROOT, 'node_modules', name);

describe('an executable of a tool using the most-used npm packages', () => {
  it('builds, and answers describe and a call as the unbuilt tool does', async () => {
    mkdirSync(join(dir, 'node_modules'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'packages-tool', type: 'module' }));
    symlinkSync(join(ROOT, 'packages/twylt'), join(dir, 'node_modules/twylt'), 'dir');
    const pinned = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies;
    for (const name of PACKAGES) {
      expect(pinned[name], `${name} is a pinned devDependency`).toMatch(/^\d+\.\d+\.\d+$/);
      const version = (JSON.parse(readFileSync(join(installed(name), 'package.json'), 'utf8')) as { version: string }).version;
      expect(version, `node_modules/${name} is the pinned version`).toBe(pinned[name]);
      symlinkSync(installed(name), join(dir, 'node_modules', name), 'dir');
    }
    writeFileSync(join(dir, 'tool.ts'), readFileSync(join(ROOT, 'tests/build/fixtures/packages/tool.ts'), 'utf8'));

    const built = await run([process.execPath, CLI, 'build', 'tool.ts', '-o', 'packages', '--executable'], { cwd: dir, timeoutMs: 240_000 });
    expect(built.code, built.stderr).toBe(0);

    const input = JSON.stringify({ text: 'Hello World', days: 40 });
    const [binary, source] = await Promise.all([run([join(dir, 'packages'), input], { cwd: freshDir() }), run([...TS_RUNTIME, join(dir, 'tool.ts'), input], { cwd: dir })]);
    expect(source.code, source.stderr).toBe(0);
    expect(binary).toEqual(source);
    expect(JSON.parse(binary.stdout)).toEqual({
      process: 'same',
      yaml: 'text: Hello World\n',
      semver: 'true',
      chalk: '\u001b[1mHello World\u001b[22m',
      commander: 'Hello World',
      dateFns: '2024-02-10',
      uuid: JSON.parse(source.stdout).uuid,
      lodash: 'hello-world',
    });
    const describeOf = (command: string[], cwd: string) => run([...command, '{"describe": "json_spec"}'], { cwd });
    expect(await describeOf([join(dir, 'packages')], freshDir())).toEqual(await describeOf([...TS_RUNTIME, join(dir, 'tool.ts')], dir));
  }, 300_000);
});
