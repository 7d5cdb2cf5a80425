/**
 * What `twylt scan --install` refuses to do with a tool's requirements: they are data a tool
 * publishes, never options of pip or npm; npm runs no install scripts unless allowed; any
 * install failure is that tool's `failed` row while the other tools are reported and written.
 * Nothing here reaches the network: the refused requirements never start an installer, the
 * failing pip is a stand-in, and the npm package is a local tarball.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NO_PYTHON_REASON, noPython, python } from '../support/python.js';
import { runTwylt } from '../support/twylt-cli.js';
import { PACKS, type Row, scanJson, scratch } from './support.js';

const dir = scratch('install-safety');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SLOW = 120_000;

/** A launcher-style describe (empty schemas) publishing `requirements`, as a Python tool in `folder`. */
function pythonLauncher(folder: string, name: string, requirements: object): string {
  mkdirSync(folder, { recursive: true });
  const meta = { format_version: '1.8', name, version: '0.0.1', description: 'Publishes hostile requirements.', requirements, inputSchema: {}, outputSchema: {}, few_shots: [] };
  writeFileSync(join(folder, 'tool.py'), `print(${JSON.stringify(JSON.stringify(meta))})\n`);
  return folder;
}

/** A launcher-style JavaScript tool publishing `dependencies`; once they load, it describes a real tool. */
function nodeLauncher(folder: string, name: string, dependencies: Record<string, string>, loads?: string): string {
  mkdirSync(folder, { recursive: true });
  const requirements = { tool: 'npm', format: 'package.json', content: JSON.stringify({ dependencies }) };
  const schema = { type: 'object', properties: {}, additionalProperties: false };
  writeFileSync(
    join(folder, 'tool.mjs'),
    `import { createRequire } from 'node:module';
let loaded = false;
try { createRequire(import.meta.url)(${JSON.stringify(loads ?? '')}); loaded = true; } catch {}
const schema = ${JSON.stringify(schema)};
console.log(JSON.stringify({ format_version: '1.8', name: ${JSON.stringify(name)}, version: '0.0.1', description: 'd',
  requirements: ${JSON.stringify(requirements)}, inputSchema: loaded ? schema : {}, outputSchema: loaded ? schema : {}, few_shots: [] }));
`,
  );
  return folder;
}

describe.skipIf(noPython)(`requirements are data${noPython ? `: skipped, ${NO_PYTHON_REASON}` : ''}`, () => {
  it(
    'refuses a pip option line and an option-like npm name on their rows; the others are still reported and written',
    async () => {
      const root = join(dir, 'options');
      pythonLauncher(join(root, 'pip_target'), 'pip_target', { tool: 'pip', format: 'requirements.txt', content: `tomli-w==1.2.0\n--target ${join(dir, 'pip-elsewhere')}\n` });
      nodeLauncher(join(root, 'npm_prefix'), 'npm_prefix', { [`--prefix=${join(dir, 'npm-elsewhere')}`]: '1.0.0' });
      const envs = join(dir, 'options-envs');
      const catalog = join(dir, 'options-catalog.json');
      const { code, rows, stderr } = await scanJson([root, join(PACKS, 'dupes/one'), '--install', '--envs', envs, '--write', catalog]);
      expect(code, stderr).toBe(1);
      const byName = new Map([...rows.values()].map((row) => [row.name, row]));
      expect(byName.get('pip_target')).toMatchObject({
        status: 'failed',
        reason: `its requirements line "--target ${join(dir, 'pip-elsewhere')}" is not a requirement specifier (options, files and paths are never taken from a tool's requirements)`,
      });
      expect(byName.get('npm_prefix')).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^its npm dependency "--prefix=.*" is not a package name/) });
      expect(byName.get('same')!.status).toBe('ok');
      // No installer ran: nothing went where the requirements pointed, nothing into the cache.
      expect(readdirSync(dir).filter((name) => name.includes('elsewhere'))).toEqual([]);
      expect(existsSync(envs) ? readdirSync(envs) : []).toEqual([]);
      expect(JSON.parse(readFileSync(catalog, 'utf8')).tools.map((entry: { source: string }) => entry.source)).toEqual([join(PACKS, 'dupes/one/tool.py')]);
    },
    SLOW,
  );

  it(
    'makes an installer that fails in any way that tool’s failed row, never a crash',
    async () => {
      // A stand-in interpreter whose pip "succeeds" and installs nothing: the rename of the
      // staging folder fails, which once crashed the scan and lost every other row. Asked
      // what it is (outside.ts), it names itself, so that the install runs it.
      const fake = join(dir, 'fake-python');
      writeFileSync(fake, `#!/bin/sh\ncase "$1 $2" in\n"-I -m") exit 0;;\n"-I -c") echo "$0"; echo 3.11; exit 0;;\nesac\nexec ${python} "$@"\n`);
      chmodSync(fake, 0o755);
      const root = pythonLauncher(join(dir, 'empty-install', 'quiet'), 'quiet', { tool: 'pip', format: 'requirements.txt', content: 'tomli-w==1.2.0\n' });
      const catalog = join(dir, 'empty-catalog.json');
      // Not scanJson: it would name the real interpreter after this one.
      const result = await runTwylt(['scan', '--json', root, join(PACKS, 'dupes/one'), '--install', '--envs', join(dir, 'empty-envs'), '--python', fake, '--write', catalog]);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).not.toMatch(/ENOENT|\n\s+at /);
      const byName = new Map((JSON.parse(result.stdout) as { tools: Row[] }).tools.map((row) => [row.name, row]));
      expect(byName.get('quiet')).toMatchObject({ status: 'failed', reason: `installing its requirements failed: ${fake} succeeded but left nothing in the environment folder` });
      expect(byName.get('same')!.status).toBe('ok');
      expect(existsSync(catalog)).toBe(true);
    },
    SLOW,
  );
});

describe('npm install scripts', () => {
  it(
    'never run unless --allow-install-scripts is given',
    async () => {
      // A local package whose postinstall leaves a marker: installing it must not run it.
      const marker = join(dir, 'postinstall-ran');
      const pkg = join(dir, 'scripted');
      mkdirSync(pkg, { recursive: true });
      const script = `node -e "require('fs').writeFileSync(${JSON.stringify(marker).replace(/"/g, "'")}, '')"`;
      writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'twylt-test-scripted', version: '1.0.0', main: 'index.js', scripts: { postinstall: script } }));
      writeFileSync(join(pkg, 'index.js'), 'module.exports = 1;\n');
      const tarball = join(dir, execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: pkg, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().split('\n').at(-1)!);
      const root = nodeLauncher(join(dir, 'scripts-pack', 'scripted'), 'scripted', { 'twylt-test-scripted': `file:${tarball}` }, 'twylt-test-scripted');
      const envs = join(dir, 'scripts-envs');

      // The NODE_PATH the scan ran with stays, behind the new environment.
      const scanNodePath = join(dir, 'scan-node-path');
      const off = await scanJson([root, '--install', '--envs', envs], { NODE_PATH: scanNodePath });
      expect(off.code, off.stderr).toBe(0);
      expect([...off.rows.values()][0]).toMatchObject({ name: 'scripted', status: 'ok' });
      expect([...off.rows.values()][0]!.env!.NODE_PATH!.split(delimiter)).toEqual([expect.stringMatching(new RegExp(`^${envs}/npm-[0-9a-f]{16}/node_modules$`)), scanNodePath]);
      expect(existsSync(marker)).toBe(false);

      const on = await scanJson([root, '--install', '--envs', envs, '--allow-install-scripts']);
      expect(on.code, on.stderr).toBe(0);
      expect(existsSync(marker)).toBe(true);
      // An environment made with scripts is another environment than one made without.
      expect([...on.rows.values()][0]!.env).not.toEqual([...off.rows.values()][0]!.env);
    },
    SLOW,
  );
});
