/**
 * Issue 36, item 3 for npm: a TypeScript tool that describes with its schemas but imports
 * its declared npm requirement only when called was `ok`, nothing was installed, and its
 * first call failed with ERR_MODULE_NOT_FOUND. A declared package not installed in a
 * node_modules folder from the tool's folder up (NODE_PATH does not count), or installed at
 * a version outside the declared range, makes it needs_install; --install installs it and
 * the call works. The package is a tarball made here (`file:`), installed offline.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PACKAGE, lazyPack, writePackage, writeTool } from './lazy-npm.js';
import { scanJson, scratch } from './support.js';

const dir = scratch('install-npm');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SLOW = 120_000;

describe('a declared npm requirement imported lazily', () => {
  it(
    'is needs_install while it is not installed, and installed by --install (offline, from a file: tarball)',
    async () => {
      const { pack, tarball } = lazyPack(dir, 'lazy');
      const envs = join(dir, 'envs');
      const offline = { npm_config_offline: 'true', NODE_PATH: '' };

      const before = await scanJson([pack, '--envs', envs], offline);
      expect(before.code, before.stderr).toBe(1);
      const [first] = [...before.rows.values()];
      expect(first).toMatchObject({ name: 'pad', status: 'needs_install' });
      expect(first!.reason).toBe(
        `it declares ${PACKAGE}@file:${tarball}, not installed in a node_modules folder from ${join(pack, 'tools', 'pad')} up; \`twylt scan --install ${pack}\` installs them, running: ` +
          `npm install --no-audit --no-fund --omit=dev --ignore-scripts --prefix ${first!.reason.match(/--prefix (\S+)/)![1]} -- ${PACKAGE}@file:${tarball}`,
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
