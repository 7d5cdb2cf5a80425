/**
 * `twylt scan --install`: requirements go into a cache of environments keyed by their
 * content (pip --target, npm --prefix), never into the global site-packages; a second scan
 * reuses them; concurrent scans share them; a failed install is that tool's `failed`.
 * PyPI (or the machine's pip index) and the npm registry must be reachable.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../packages/twylt/src/toolset/config.js';
import { NO_PYTHON_REASON, noPython, python } from '../support/python.js';
import { PACKS, scanJson, scratch } from './support.js';

const dir = scratch('install');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const NEEDS = 'essential/tools/needs_dep/run.py';
/** Installs reach the network: minutes, not seconds, on a slow day. */
const SLOW = 300_000;

function globalPackages(): string {
  return execFileSync(python!, ['-m', 'pip', 'list', '--format=freeze', '--disable-pip-version-check'], { encoding: 'utf8' });
}

function importsGlobally(module: string): boolean {
  try {
    execFileSync(python!, ['-c', `import ${module}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(noPython)(`--install${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, () => {
  it(
    'installs into the cache under XDG_CACHE_HOME, describes the tool again, records its PYTHONPATH, and leaves the global site-packages alone',
    async () => {
      expect(importsGlobally('tomli_w'), 'tomli_w must not be installed globally for this test').toBe(false);
      const before = globalPackages();
      const cache = join(dir, 'xdg');
      const catalog = join(dir, 'catalog.json');
      const env = { XDG_CACHE_HOME: cache, TWYLT_ENVS_DIR: '' };
      const first = await scanJson([join(PACKS, 'essential'), '--install', '--write', catalog], env);
      expect(first.code, first.stderr).toBe(0);
      const row = first.rows.get(NEEDS)!;
      expect(row).toMatchObject({ name: 'to_toml', status: 'ok', env: { PYTHONPATH: expect.stringMatching(/\/xdg\/twylt\/envs\/pip-[0-9a-f]{16}$/) } });
      const envDir = row.env!.PYTHONPATH!;
      expect(readdirSync(envDir)).toContain('tomli_w');
      expect(readdirSync(join(cache, 'twylt', 'envs'))).toEqual([envDir.split('/').at(-1)]);
      expect(parseConfig(readFileSync(catalog, 'utf8'), catalog).find((entry) => entry.source?.endsWith(NEEDS))!.env).toEqual({ PYTHONPATH: envDir });
      // Nothing reached the interpreter's own packages.
      expect(globalPackages()).toBe(before);
      expect(importsGlobally('tomli_w')).toBe(false);

      // A second scan reuses the environment: the same folder, not installed again.
      const inode = statSync(envDir).ino;
      const second = await scanJson([join(PACKS, 'essential'), '--install'], env);
      expect(second.code).toBe(0);
      expect(second.rows.get(NEEDS)!.env).toEqual({ PYTHONPATH: envDir });
      expect(statSync(envDir).ino).toBe(inode);
    },
    SLOW,
  );

  it(
    'two scans at once share one environment safely',
    async () => {
      const envs = join(dir, 'shared-envs');
      const [one, two] = await Promise.all([0, 1].map(() => scanJson([join(PACKS, 'essential'), '--install', '--envs', envs])));
      expect([one!.code, two!.code]).toEqual([0, 0]);
      expect(one!.rows.get(NEEDS)!.env).toEqual(two!.rows.get(NEEDS)!.env);
      // One environment, no staging folder left behind by the scan that lost the race.
      expect(readdirSync(envs)).toHaveLength(1);
      expect(existsSync(join(one!.rows.get(NEEDS)!.env!.PYTHONPATH!, 'tomli_w'))).toBe(true);
    },
    SLOW,
  );

  it(
    'fails a tool whose install fails with pip’s and npm’s own line; the others go on',
    async () => {
      const globalModules = execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim();
      const globalBefore = existsSync(globalModules) ? readdirSync(globalModules) : [];
      const envs = join(dir, 'failing-envs');
      const { code, rows } = await scanJson([join(PACKS, 'unresolvable'), join(PACKS, 'dupes/one'), '--install', '--envs', envs]);
      expect(code).toBe(1);
      expect(rows.get('unresolvable/pip/tool.py')).toMatchObject({
        status: 'failed',
        reason: expect.stringMatching(/^installing its requirements failed: ERROR: .*twylt-tests-no-such-package==9\.9\.9/),
      });
      expect(rows.get('unresolvable/npm/tool.mjs')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^installing its requirements failed: npm error /) });
      expect(rows.get('dupes/one/tool.py')!.status).toBe('ok');
      // A failed install leaves nothing in the cache, and npm never touched the global node_modules.
      expect(existsSync(envs) ? readdirSync(envs) : []).toEqual([]);
      expect(existsSync(globalModules) ? readdirSync(globalModules) : []).toEqual(globalBefore);
    },
    SLOW,
  );
});

/**
 * Issue 36: a tool that describes with its schemas but imports its declared requirement only
 * when called was `ok`, nothing was installed, and its first call failed with
 * ModuleNotFoundError. What it declares and its interpreter lacks (asked isolated, -I) makes
 * it needs_install; --install installs it, and the call works.
 */
describe.skipIf(noPython)(`a declared requirement imported lazily${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, () => {
  const LAZY = 'lazy/tools/slug/tool.py';
  it(
    'is needs_install while it is not installed, and installed by --install',
    async () => {
      expect(importsGlobally('slugify'), 'python-slugify must not be installed globally for this test').toBe(false);
      const envs = join(dir, 'lazy-envs');
      const before = await scanJson([join(PACKS, 'lazy'), '--envs', envs]);
      expect(before.code).toBe(1);
      expect(before.rows.get(LAZY)).toMatchObject({ name: 'slug', status: 'needs_install', reason: expect.stringMatching(/^it declares python-slugify==9\.0\.0, not installed for \S*python\S*; `twylt scan --install /) });
      const installed = await scanJson([join(PACKS, 'lazy'), '--install', '--envs', envs]);
      expect(installed.code, installed.stderr).toBe(0);
      const row = installed.rows.get(LAZY)!;
      expect(row).toMatchObject({ status: 'ok', env: { PYTHONPATH: expect.stringContaining(envs) } });
      const call = execFileSync(row.command[0]!, [...row.command.slice(1), JSON.stringify({ text: 'Hello World' })], { encoding: 'utf8', env: { ...process.env, ...row.env }, cwd: row.cwd });
      expect(JSON.parse(call)).toEqual({ slug: 'hello-world' });
    },
    SLOW,
  );
});
