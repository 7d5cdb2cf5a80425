/**
 * Issue 36, item 3 for npm: a TypeScript tool that describes with its schemas but imports
 * its declared npm requirement only when called was `ok`, nothing was installed, and its
 * first call failed with ERR_MODULE_NOT_FOUND. A declared package not installed in a
 * node_modules folder from the tool's folder up (NODE_PATH does not count), or installed at
 * a version outside the declared range, makes it needs_install; --install installs it and
 * the call works. The package is a tarball made here (`file:`), installed offline.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scanJson, scratch } from './support.js';

const dir = scratch('install-npm');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const PACKAGE = 'twylt-test-lazy-pad';
const SLOW = 120_000;

/** A package `twylt-test-lazy-pad` at `version` in `at` (its folder), exporting pad(). */
function writePackage(at: string, version: string): void {
  mkdirSync(at, { recursive: true });
  writeFileSync(join(at, 'package.json'), JSON.stringify({ name: PACKAGE, version, type: 'module', main: 'index.js' }));
  writeFileSync(join(at, 'index.js'), `export const pad = (text, width) => text.padStart(width, '.');\nexport const version = ${JSON.stringify(version)};\n`);
}

/** A TypeScript tool in `folder` declaring `range` of the package and importing it only when called. */
function writeTool(folder: string, name: string, range: string): void {
  mkdirSync(folder, { recursive: true });
  const requirements = { tool: 'npm', format: 'package.json', content: JSON.stringify({ dependencies: { [PACKAGE]: range } }) };
  writeFileSync(
    join(folder, 'tool.ts'),
    `import { defineTool } from 'twylt';

defineTool({
  name: ${JSON.stringify(name)},
  version: '0.1.0',
  description: 'Pad a text on the left.',
  requirements: ${JSON.stringify(requirements)},
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  outputSchema: { type: 'object', properties: { padded: { type: 'string' }, version: { type: 'string' } }, required: ['padded', 'version'], additionalProperties: false },
  biz: async (data: { text: string }) => {
    const { pad, version } = await import(${JSON.stringify(PACKAGE)}); // imported lazily: the describe never needs it
    return { padded: pad(data.text, 8), version };
  },
}).run();
`,
  );
}

describe('a declared npm requirement imported lazily', () => {
  it(
    'is needs_install while it is not installed, and installed by --install (offline, from a file: tarball)',
    async () => {
      writePackage(join(dir, 'source'), '1.0.0');
      const tarball = execFileSync('npm', ['pack', '--pack-destination', dir, '--silent'], { cwd: join(dir, 'source'), encoding: 'utf8' }).trim();
      const pack = join(dir, 'lazy');
      writeTool(join(pack, 'tools', 'pad'), 'pad', `file:${join(dir, tarball)}`);
      const envs = join(dir, 'envs');
      const offline = { npm_config_offline: 'true', NODE_PATH: '' };

      const before = await scanJson([pack, '--envs', envs], offline);
      expect(before.code, before.stderr).toBe(1);
      const [first] = [...before.rows.values()];
      expect(first).toMatchObject({ name: 'pad', status: 'needs_install' });
      expect(first!.reason).toBe(
        `it declares ${PACKAGE}@file:${join(dir, tarball)}, not installed in a node_modules folder from ${join(pack, 'tools', 'pad')} up; \`twylt scan --install ${pack}\` installs them, running: ` +
          `npm install --no-audit --no-fund --omit=dev --ignore-scripts --prefix ${first!.reason.match(/--prefix (\S+)/)![1]} -- ${PACKAGE}@file:${join(dir, tarball)}`,
      );

      const installed = await scanJson([pack, '--install', '--envs', envs], offline);
      expect(installed.code, installed.stderr).toBe(0);
      const [row] = [...installed.rows.values()];
      expect(row).toMatchObject({ status: 'ok', env: { NODE_PATH: expect.stringMatching(new RegExp(`^${envs}/npm-[0-9a-f]{16}/node_modules$`)) } });
      const call = execFileSync(row!.command[0]!, [...row!.command.slice(1), JSON.stringify({ text: 'abc' })], { encoding: 'utf8', env: { ...process.env, ...row!.env }, cwd: row!.cwd });
      expect(JSON.parse(call)).toEqual({ padded: '.....abc', version: '1.0.0' });
    },
    SLOW,
  );

  it(
    'is ok when its node_modules holds a version in the declared range, needs_install when outside it',
    async () => {
      const pack = join(dir, 'versions');
      writePackage(join(pack, 'node_modules', PACKAGE), '0.9.0');
      writeTool(join(pack, 'tools', 'fits'), 'fits', '^0.9.0');
      writeTool(join(pack, 'tools', 'newer'), 'newer', '^1.0.0');
      const { rows } = await scanJson([pack, '--envs', join(dir, 'no-envs')], { NODE_PATH: '' });
      const byName = new Map([...rows.values()].map((row) => [row.name, row]));
      expect(byName.get('fits')).toMatchObject({ status: 'ok', reason: '' });
      expect(byName.get('newer')).toMatchObject({ status: 'needs_install', reason: expect.stringMatching(new RegExp(`^it declares ${PACKAGE}@\\^1\\.0\\.0, not installed in a node_modules folder from ${join(pack, 'tools', 'newer')} up; `)) });
    },
    SLOW,
  );
});
