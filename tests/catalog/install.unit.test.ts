/**
 * The catalog's install rules from the source (docs/mutation.md, `npm run mutate -- catalog`):
 * which requirements become which install command (pip and npm, options refused), the
 * environment's key, the installer's error line, pip's configuration as the sandboxed
 * install reads it, the workspaces' folders, and what runs outside the sandbox (from `/`).
 * The installs themselves run in install.test.ts and install-sandbox.test.ts.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultEnvsDir, installerLine, planEnv, planText, type EnvPlan } from '../../packages/twylt/src/toolset/catalog/install.js';
import { commandPath, NEUTRAL_CWD, outsideOutput, resolvePython } from '../../packages/twylt/src/toolset/catalog/outside.js';
import { npmAccess, pipAccess, pipConfig } from '../../packages/twylt/src/toolset/catalog/sandboxed-install.js';
import { defaultWorkspacesDir, makeWorkspace, workspaceOf } from '../../packages/twylt/src/toolset/catalog/workspaces.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-install-unit-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A stand-in executable: a Node.js script. */
function script(name: string, body: string): string {
  const file = join(scratch, name);
  writeFileSync(file, `#!${process.execPath}\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

const context = { envsDir: '/envs', python: async () => ({ executable: '/py/bin/python3', version: '3.12' }) };

describe('planEnv', () => {
  it('pip: one specifier an argument after --, comments and blank lines dropped, into --target DIR', async () => {
    const plan = (await planEnv({ tool: 'pip', content: '# deps\nrequests==2.0  # pinned\n\n  tomli>=1\r\nx[extra]; python_version>"3"\n' }, context)) as EnvPlan;
    expect(plan.installer).toBe('pip');
    expect(plan.dir).toMatch(/^\/envs\/pip-[0-9a-f]{16}$/);
    expect(plan.command).toEqual(['/py/bin/python3', '-I', '-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--target', plan.dir, '--', 'requests==2.0', 'tomli>=1', 'x[extra]; python_version>"3"']);
    expect(plan.env).toEqual({ PYTHONPATH: plan.dir });
    // The key: the specifiers and the Python version.
    const again = (await planEnv({ tool: 'pip', content: 'requests==2.0\ntomli>=1\nx[extra]; python_version>"3"' }, context)) as EnvPlan;
    expect(again.dir).toBe(plan.dir);
    const other = (await planEnv({ tool: 'pip', content: 'requests==2.0\ntomli>=1\nx[extra]; python_version>"3"' }, { ...context, python: async () => ({ executable: '/py', version: '3.11' }) })) as EnvPlan;
    expect(other.dir).not.toBe(plan.dir);
  });

  const refusedPip: [string, string][] = [
    ['--target /etc', '--target /etc'],
    ['-r other.txt', '-r other.txt'],
    ['./local', './local'],
    ['pkg --hash=sha256:x', 'pkg --hash=sha256:x'],
    ['pkg\t-e x', 'pkg\t-e x'],
  ];
  for (const [line, quoted] of refusedPip) {
    it(`pip refuses ${JSON.stringify(line)}`, async () => {
      expect(await planEnv({ tool: 'pip', content: `ok\n${line}\n` }, context)).toEqual({ problem: `its requirements line ${JSON.stringify(quoted)} is not a requirement specifier (options, files and paths are never taken from a tool's requirements)` });
    });
  }
  it('pip clips a long line at 80 characters', async () => {
    const line = `-${'x'.repeat(100)}`;
    expect(await planEnv({ tool: 'pip', content: line }, context)).toEqual({ problem: `its requirements line ${JSON.stringify(`${line.slice(0, 77)}...`)} is not a requirement specifier (options, files and paths are never taken from a tool's requirements)` });
    const exact = `-${'x'.repeat(79)}`;
    expect(((await planEnv({ tool: 'pip', content: exact }, context)) as { problem: string }).problem).toContain(JSON.stringify(exact));
  });

  it('npm: the dependencies sorted as name@range, scripts off, --prefix DIR, NODE_PATH its node_modules', async () => {
    const plan = (await planEnv({ tool: 'npm', content: JSON.stringify({ dependencies: { zod: '^3', '@scope/a.b': '1.x', skipped: 5 }, devDependencies: { vitest: '1' } }) }, context)) as EnvPlan;
    expect(plan.installer).toBe('npm');
    expect(plan.dir).toMatch(/^\/envs\/npm-[0-9a-f]{16}$/);
    expect(plan.command).toEqual(['npm', 'install', '--no-audit', '--no-fund', '--omit=dev', '--ignore-scripts', '--prefix', plan.dir, '--', '@scope/a.b@1.x', 'zod@^3']);
    expect(plan.env).toEqual({ NODE_PATH: join(plan.dir, 'node_modules') });
    expect(plan.links).toEqual({});
    const scripts = (await planEnv({ tool: 'npm', content: JSON.stringify({ dependencies: { zod: '^3', '@scope/a.b': '1.x' } }) }, { ...context, allowInstallScripts: true })) as EnvPlan;
    expect(scripts.command).toEqual(['npm', 'install', '--no-audit', '--no-fund', '--omit=dev', '--prefix', scripts.dir, '--', '@scope/a.b@1.x', 'zod@^3']);
    expect(scripts.dir).not.toBe(plan.dir);
  });

  it('npm: the environment is one per major version of Node.js (a native addon is built for its ABI), not per minor or patch', async () => {
    const content = JSON.stringify({ dependencies: { zod: '^3' } });
    const dirOn = async (version: string) => {
      const own = Object.getOwnPropertyDescriptor(process.versions, 'node')!;
      Object.defineProperty(process.versions, 'node', { ...own, value: version });
      try {
        return ((await planEnv({ tool: 'npm', content }, context)) as EnvPlan).dir;
      } finally {
        Object.defineProperty(process.versions, 'node', own);
      }
    };
    const [a, b, c, d] = [await dirOn('22.1.0'), await dirOn('22.12.3'), await dirOn('24.1.0'), await dirOn('2.0.0')];
    expect(b).toBe(a);
    expect(new Set([a, c, d]).size).toBe(3);
  });

  it("npm: twylt's own packages alone are links, no install command", async () => {
    const plan = (await planEnv({ tool: 'npm', content: JSON.stringify({ dependencies: { twylt: '*' } }) }, context)) as EnvPlan;
    expect(plan.command).toEqual([]);
    expect(Object.keys(plan.links ?? {})).toEqual(['twylt']);
  });

  const refusedNpm: [Record<string, unknown>, string][] = [
    [{ '--registry=x': '1' }, 'its npm dependency "--registry=x" is not a package name (options are never taken from a tool\'s requirements)'],
    [{ '.hidden': '1' }, 'its npm dependency ".hidden" is not a package name (options are never taken from a tool\'s requirements)'],
    [{ '@scope/': '1' }, 'its npm dependency "@scope/" is not a package name (options are never taken from a tool\'s requirements)'],
    [{ 'a b': '1' }, 'its npm dependency "a b" is not a package name (options are never taken from a tool\'s requirements)'],
    [{ [`a${'b'.repeat(214)}`]: '1' }, `its npm dependency "${`a${'b'.repeat(76)}...`}" is not a package name (options are never taken from a tool's requirements)`],
    [{ ok: '1 --foo' }, 'the range of its npm dependency "ok" ("1 --foo") contains white space'],
  ];
  for (const [dependencies, problem] of refusedNpm) {
    it(`npm refuses ${JSON.stringify(dependencies).slice(0, 40)}`, async () => {
      expect(await planEnv({ tool: 'npm', content: JSON.stringify({ dependencies }) }, context)).toEqual({ problem });
    });
  }
  it('a name of 214 characters is a package name', async () => {
    const name = `a${'b'.repeat(213)}`;
    expect(((await planEnv({ tool: 'npm', content: JSON.stringify({ dependencies: { [name]: '1' } }) }, context)) as EnvPlan).command.at(-1)).toBe(`${name}@1`);
  });

  const nothing: [string, unknown][] = [
    ['no requirements', undefined],
    ['content not text', { tool: 'pip', content: 5 }],
    ['another installer', { tool: 'cargo', content: 'x' }],
    ['another installer, npm-like content', { tool: 'gem', content: '{"dependencies": {"a": "1"}}' }],
    ['pip, only comments', { tool: 'pip', content: '# nothing\n\n' }],
    ['npm, not JSON', { tool: 'npm', content: '{' }],
    ['npm, no dependencies', { tool: 'npm', content: '{"name": "x"}' }],
    ['npm, dependencies not an object', { tool: 'npm', content: '{"dependencies": ["a"]}' }],
  ];
  for (const [what, requirements] of nothing) it(`${what}: nothing to install`, async () => expect(await planEnv(requirements, context)).toBeUndefined());
});

describe('planText, installerLine, defaultEnvsDir', () => {
  it('the plan in words: its command, then its links', () => {
    expect(planText({ installer: 'npm', dir: '/e', command: ['npm', 'install'], env: {}, links: { twylt: '/t', 'twylt-mcp': '/m' } })).toBe('npm install, then a link /e/node_modules/twylt -> /t, then a link /e/node_modules/twylt-mcp -> /m');
    expect(planText({ installer: 'npm', dir: '/e', command: [], env: {}, links: { twylt: '/t' } })).toBe('a link /e/node_modules/twylt -> /t');
    expect(planText({ installer: 'pip', dir: '/e', command: ['pip', 'x'], env: {} })).toBe('pip x');
  });
  const lines: [string, string | undefined][] = [
    ['Collecting x\nERROR: first\n  ERROR: No matching distribution  \nmore', 'ERROR: No matching distribution'],
    ['npm error code E404\nnpm error 404 Not Found - GET x\nnpm error 404 more', 'npm error 404 Not Found - GET x'],
    ['npm ERR! code E404\nnpm ERR! 404 gone', 'npm ERR! 404 gone'],
    ['ERROR: a\nERROR: b\nERROR: c', 'ERROR: c'],
    ['see the npm error log\nnpm error why', 'npm error why'],
    ['npm error see npm error code docs\nnpm error later', 'npm error see npm error code docs'],
    ['npm error code ENOENT', 'npm error code ENOENT'],
    ['first\nlast\n\n  ', 'last'],
    ['\r\n', undefined],
  ];
  for (const [stderr, expected] of lines) it(`installerLine ${JSON.stringify(stderr).slice(0, 40)}`, () => expect(installerLine(stderr)).toBe(expected));
  it('defaultEnvsDir: TWYLT_ENVS_DIR, else XDG_CACHE_HOME, else ~/.cache', () => {
    expect(defaultEnvsDir({ TWYLT_ENVS_DIR: '/x', XDG_CACHE_HOME: '/c' })).toBe('/x');
    expect(defaultEnvsDir({ TWYLT_ENVS_DIR: '', XDG_CACHE_HOME: '/c' })).toBe('/c/twylt/envs');
    expect(defaultEnvsDir({ XDG_CACHE_HOME: '' })).toBe(join(homedir(), '.cache', 'twylt', 'envs'));
  });
});

describe("pip's configuration, as the sandboxed install reads it", () => {
  it('pipConfig: the winning section of each key, Python strings unquoted, other commands\' sections and other lines ignored', () => {
    const listed = [
      "global.index-url='https://a.example/simple'",
      "install.index-url='https://b.example/simple'",
      "global.timeout='5'",
      ":env:.timeout='9'",
      "install.timeout='7'",
      "download.proxy='http://p'",
      'global.cert="/etc/c\\"a.pem"',
      "global.trusted-host='x\\ny'",
      'global.plain=bare',
      'not a line',
      "  global.spaced='s'  ",
      "junk.global.ignored='x'",
      "global.odd=x'a'",
      "global.odd2='a'b",
      "global.esc='a\\tb\\rc\\nd'",
    ].join('\r\n');
    expect([...pipConfig(listed)]).toEqual([
      ['index-url', 'https://b.example/simple'],
      ['timeout', '9'],
      ['cert', '/etc/c"a.pem'],
      ['trusted-host', 'x\ny'],
      ['plain', 'bare'],
      ['spaced', 's'],
      ['odd', "x'a'"],
      ['odd2', "'a'b"],
      ['esc', 'a\tb\rc\nd'],
    ]);
  });

  it('pipAccess: PIP_* variables for each key, the hosts of its URLs, the files it names; PyPI when no index is set', async () => {
    const cert = join(scratch, 'ca.pem');
    writeFileSync(cert, 'CA');
    const python = script('python-config', `process.stdout.write(${JSON.stringify(`global.cert='${cert}'\nglobal.extra-index-url='https://mirror.example:8443/simple file://${scratch}/simple /missing'\n`)})`);
    const access = await pipAccess(python);
    expect(access.env).toEqual({ PIP_NO_INPUT: '1', PIP_CONFIG_FILE: '/dev/null', PIP_CERT: cert, PIP_EXTRA_INDEX_URL: `https://mirror.example:8443/simple file://${scratch}/simple /missing` });
    expect(access.read).toEqual([cert]);
    expect(access.hosts).toEqual(['mirror.example:8443', 'pypi.org', 'files.pythonhosted.org']);
    const own = script('python-own', `process.stdout.write("global.index-url='https://own.example/simple'\\n")`);
    expect((await pipAccess(own)).hosts).toEqual(['own.example']);
    const offline = script('python-off', `process.stdout.write("global.no-index='true'\\n")`);
    expect((await pipAccess(offline)).hosts).toEqual([]);
    const pypi = script('python-pypi', `process.stdout.write("global.index-url='https://pypi.org/simple'\\n")`);
    expect((await pipAccess(pypi)).hosts).toEqual(['pypi.org', 'files.pythonhosted.org']);
    // no-index: only pip's true words turn PyPI off.
    for (const [value, off] of [['on', true], ['YES', true], ['1', true], ['common', false], ['yesno', false], ['0', false]] as const) {
      const noIndex = script(`python-no-index-${value}`, `process.stdout.write("global.no-index='${value}'\\n")`);
      expect((await pipAccess(noIndex)).hosts, value).toEqual(off ? [] : ['pypi.org', 'files.pythonhosted.org']);
    }
    // Which words are hosts and which are files: http and https URLs only from their start; a
    // local index named simple is read with its parent; words that are neither are ignored, a
    // relative path too (package.json is there, relative to this process's cwd).
    const index = join(scratch, 'index', 'simple');
    mkdirSync(index, { recursive: true });
    const words = [`file://${index}`, `file://${cert}`, index, 'http://plain.example/simple', 'xhttps://evil.example/', 'http://', 'mailto:x', 'xfile:///etc', 'package.json'].join(' ');
    const mixed = script('python-words', `process.stdout.write(${JSON.stringify(`global.extra-index-url='${words}'
global.index-url='https://own.example/simple'
`)})`);
    const wordsAccess = await pipAccess(mixed);
    expect(wordsAccess.hosts).toEqual(['plain.example', 'own.example']);
    // Only an index named simple brings its parent: a file URL of another name is that file.
    expect(wordsAccess.read).toEqual([join(scratch, 'index'), cert, index]);
    const failing = script('python-fail', 'process.stderr.write("x\\nno pip here\\n"); process.exit(1)');
    await expect(pipAccess(failing)).rejects.toThrow("cannot read the installer's configuration (pip config list): no pip here");
  });

  it("npmAccess: the registry `npm config get registry` prints (npm as PATH finds it, asked from /), its host; a failure says what was asked and npm's last line", async () => {
    const bin = join(scratch, 'npm-bin');
    mkdirSync(bin);
    const npm = (body: string) => writeFileSync(join(bin, 'npm'), `#!${process.execPath}\n${body}\n`, { mode: 0o755 });
    const savedPath = process.env.PATH;
    process.env.PATH = `${bin}:${savedPath}`;
    try {
      npm('process.stdout.write(JSON.stringify([process.cwd(), ...process.argv.slice(2)]) === \'["/","config","get","registry"]\' ? "https://registry.example:8443/npm/\\n" : "asked otherwise\\n")');
      expect(await npmAccess()).toEqual({ env: { npm_config_registry: 'https://registry.example:8443/npm/' }, read: [], hosts: ['registry.example:8443'] });
      npm('process.stderr.write("npm warn x\\nnpm error no registry here\\n"); process.exit(1)');
      await expect(npmAccess()).rejects.toThrow(/^cannot read the installer's configuration \(npm config get registry\): npm error no registry here$/);
    } finally {
      process.env.PATH = savedPath;
    }
  });
});

describe('outside the sandbox: from /', () => {
  it('outsideOutput runs from / and returns stdout; a failure is its last line of stderr, else its error', async () => {
    expect(NEUTRAL_CWD).toBe('/');
    expect(await outsideOutput(process.execPath, ['-e', 'process.stdout.write(process.cwd())'], 'cwd')).toBe('/');
    await expect(outsideOutput(process.execPath, ['-e', 'console.error("a\\nthe reason  "); process.exit(2)'], 'asked')).rejects.toThrow(/^asked: the reason$/);
    await expect(outsideOutput(process.execPath, ['-e', 'console.error("one\\ntwo\\n  three  "); process.exit(2)'], 'lines')).rejects.toThrow(/^lines: three$/);
    await expect(outsideOutput(process.execPath, ['-e', 'process.exit(2)'], 'silent')).rejects.toThrow(/^silent: Command failed: /);
    await expect(outsideOutput(join(scratch, 'none'), [], 'missing')).rejects.toThrow(/^missing: spawn .* ENOENT$/);
  });

  it('resolvePython: the executable and version it reports; else as given, "unknown"', async () => {
    const good = script('python-good', 'process.stdout.write("/opt/py/bin/python3.12\\n3.12\\n")');
    expect(await resolvePython(good)).toEqual({ executable: '/opt/py/bin/python3.12', version: '3.12' });
    const relative = script('python-rel', 'process.stdout.write("python3\\n3.12\\n")');
    expect(await resolvePython(relative)).toEqual({ executable: relative, version: 'unknown' });
    const noVersion = script('python-nov', 'process.stdout.write("/opt/py\\n")');
    expect(await resolvePython(noVersion)).toEqual({ executable: noVersion, version: 'unknown' });
    expect(await resolvePython(join(scratch, 'none'))).toEqual({ executable: join(scratch, 'none'), version: 'unknown' });
    const args = script('python-args', 'process.stdout.write("/x\\n" + JSON.stringify(process.argv.slice(2)) + "\\n")');
    expect((await resolvePython(args)).version).toBe(JSON.stringify(['-I', '-c', 'import sys; print(sys.executable); print("%d.%d" % sys.version_info[:2])']));
  });

  const paths: [string, string, string][] = [
    ['venv/bin/python3', '/w', '/w/venv/bin/python3'],
    ['./py', '/w', '/w/py'],
    ['python3', '/w', 'python3'],
    ['/usr/bin/python3', '/w', '/usr/bin/python3'],
  ];
  for (const [command, cwd, expected] of paths) it(`commandPath ${command}`, () => expect(commandPath(command, cwd)).toBe(expected));
  it('commandPath from the process cwd by default', () => expect(commandPath('a/b')).toBe(join(process.cwd(), 'a/b')));
});

describe('workspaces', () => {
  it('defaultWorkspacesDir: TWYLT_WORKSPACES_DIR, else XDG_STATE_HOME, else ~/.local/state', () => {
    expect(defaultWorkspacesDir({ TWYLT_WORKSPACES_DIR: '/w', XDG_STATE_HOME: '/s' })).toBe('/w');
    expect(defaultWorkspacesDir({ XDG_STATE_HOME: '/s' })).toBe('/s/twylt/workspaces');
    expect(defaultWorkspacesDir({ XDG_STATE_HOME: '' })).toBe(join(homedir(), '.local', 'state', 'twylt', 'workspaces'));
  });
  const rows: [string, RegExp][] = [
    ['/packs/weather/tool.py', /^\/root\/weather-[0-9a-f]{12}$/],
    ['/packs/we ath$er/tool.py', /^\/root\/we_ath_er-[0-9a-f]{12}$/],
    ['/packs/..hidden/tool.py', /^\/root\/_hidden-[0-9a-f]{12}$/],
    ['/packs/v1.2/tool.py', /^\/root\/v1\.2-[0-9a-f]{12}$/],
    ['/tool.py', /^\/root\/tool-[0-9a-f]{12}$/],
    [`/packs/${'n'.repeat(60)}/tool.py`, new RegExp(`^/root/${'n'.repeat(40)}-[0-9a-f]{12}$`)],
  ];
  for (const [source, expected] of rows) it(`workspaceOf ${source.slice(0, 30)}`, () => expect(workspaceOf('/root', source)).toMatch(expected));
  it('the same source the same workspace; another copy another', () => {
    expect(workspaceOf('/r', '/a/x/t.py')).toBe(workspaceOf('/r', '/a/x/t.py'));
    expect(workspaceOf('/r', '/a/x/t.py')).not.toBe(workspaceOf('/r', '/b/x/t.py'));
  });
  it('makeWorkspace: the root and the workspace, private to the user', async () => {
    const root = join(scratch, 'ws-root', 'deeper');
    const workspace = join(root, 'one', 'two');
    await makeWorkspace(root, workspace);
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(statSync(workspace).mode & 0o777).toBe(0o700);
    await makeWorkspace(root, workspace);
  });
});
