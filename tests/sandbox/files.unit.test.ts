/**
 * The mount rules of files.ts from the source, as exact lists (docs/mutation.md): an
 * executable's install prefix (bin, shims) and its `#!` interpreter's, a project found by
 * each of its markers, PYTHONPATH and NODE_PATH, the node_modules folders above the code,
 * the home folder never mounted nor searched for a marker (HOME planted in a temporary
 * tree), nested mounts folded, the order deeper-last, and the PATH lookup. The links in and
 * out of a pack are rows of paths.test.ts.
 */
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findExecutable, SandboxPolicyError, systemMounts, toolMounts, type Mount } from '../../packages/twylt/src/toolset/sandbox/files.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'twylt-files-unit-')));
const home = join(root, 'home');
const work = join(root, 'work');
let savedHome: string | undefined;

function file(path: string, text = '', mode = 0o644): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

beforeAll(() => {
  mkdirSync(work, { recursive: true });
  // Executables: a venv-like prefix, a pyenv-like shims folder, a plain folder, one in HOME.
  file(join(root, 'venv', 'bin', 'py'), '', 0o755);
  file(join(root, 'pyenv', 'shims', 'py'), '', 0o755);
  file(join(root, 'loose', 'tool'), '', 0o755);
  file(join(home, 'bin', 'tool'), '', 0o755);
  file(join(home, 'tool'), '', 0o755);
  // A script whose #! names an interpreter of another prefix; one naming a system one; one with a space.
  file(join(root, 'scripts', 'bin', 'run'), `#!${join(root, 'interp', 'bin', 'py')} -u\nprint(1)\n`, 0o755);
  file(join(root, 'interp', 'bin', 'py'), '', 0o755);
  file(join(root, 'scripts2', 'bin', 'run'), '#!/usr/bin/env node\n', 0o755);
  file(join(root, 'scripts3', 'bin', 'run'), `#! ${join(root, 'interp', 'bin', 'py')}\n`, 0o755);
  file(join(root, 'scripts4', 'bin', 'run'), `#!relative/py\n`, 0o755);
  // A link to an executable of another prefix: both prefixes.
  file(join(root, 'real', 'bin', 'tool'), '', 0o755);
  mkdirSync(join(root, 'links', 'bin'), { recursive: true });
  symlinkSync(join(root, 'real', 'bin', 'tool'), join(root, 'links', 'bin', 'tool'));
  // Projects, one per marker; code without one.
  for (const marker of ['package.json', 'pyproject.toml', 'setup.py', 'requirements.txt', 'deno.json', 'twylt-pack.json']) file(join(root, 'projects', marker, marker));
  for (const marker of ['package.json', 'pyproject.toml', 'setup.py', 'requirements.txt', 'deno.json', 'twylt-pack.json']) file(join(root, 'projects', marker, 'src', 'deep', 'code.js'));
  mkdirSync(join(root, 'projects', 'git', '.git'), { recursive: true });
  file(join(root, 'projects', 'git', 'src', 'code.py'));
  file(join(root, 'plain', 'a', 'code.js'));
  file(join(root, 'plain', '-o', 'code.js'));
  file(join(root, 'plain', '{j', 'code.js'));
  // In HOME: a marker in HOME itself is never taken; code in HOME without a project.
  file(join(home, 'package.json'));
  file(join(home, 'proj', 'src', 'code.js'));
  file(join(home, 'code.js'));
  // node_modules above a project.
  file(join(root, 'mono', 'package.json'));
  file(join(root, 'mono', 'apps', 'a', 'package.json'));
  file(join(root, 'mono', 'apps', 'a', 'main.js'));
  mkdirSync(join(root, 'mono', 'node_modules', 'dep'), { recursive: true });
  mkdirSync(join(root, 'mono', 'apps', 'a', 'node_modules'), { recursive: true });
  // PYTHONPATH folders.
  file(join(root, 'site', 'pkg', 'mod.py'));
  file(join(root, 'sitep', 'pyproject.toml'));
  mkdirSync(join(root, 'sitep', 'src'), { recursive: true });
});

// Per test: under Stryker the test files share one process, and others set HOME too.
beforeEach(() => {
  savedHome = process.env.HOME;
  process.env.HOME = home;
});
afterEach(() => {
  process.env.HOME = savedHome;
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

interface Files {
  cwd?: string;
  path?: string;
  env?: Record<string, string | undefined>;
  allowRead?: string[];
  allowWrite?: string[];
  workspaces?: string[];
}

function mounts(command: string[], files: Files = {}): Mount[] {
  return toolMounts({
    command,
    cwd: files.cwd ?? work,
    workspaces: files.workspaces ?? [],
    env: { PATH: files.path ?? '/usr/bin:/bin', ...files.env },
    allowRead: files.allowRead ?? [],
    allowWrite: files.allowWrite ?? [],
  });
}

const ro = (...paths: string[]): Mount[] => paths.map((path) => ({ kind: 'ro', path: join(root, path) }));
const rw = (...paths: string[]): Mount[] => paths.map((path) => ({ kind: 'rw', path: join(root, path) }));
/** The list as a set (the order has a row of its own). */
const sorted = (list: Mount[]) => [...list].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

describe('the executable', () => {
  const rows: [string, () => Mount[], Mount[]][] = [
    ['a system one (node on PATH): nothing but the workspace', () => mounts(['node', '-e', '1']), [...rw('work')]],
    ['PREFIX/bin/py on PATH: PREFIX', () => mounts(['py'], { path: join(root, 'venv', 'bin') }), [...ro('venv'), ...rw('work')]],
    ['ROOT/shims/py on PATH: ROOT', () => mounts(['py'], { path: join(root, 'pyenv', 'shims') }), [...ro('pyenv'), ...rw('work')]],
    ['an absolute path the consumer wrote, in a plain folder: that folder', () => mounts([join(root, 'loose', 'tool')]), [...ro('loose'), ...rw('work')]],
    ['HOME/bin/tool: the file, never HOME', () => mounts(['tool'], { path: join(home, 'bin') }), [{ kind: 'ro' as const, path: join(home, 'bin', 'tool') }, ...rw('work')]],
    ['HOME/tool: the file', () => mounts([join(home, 'tool')]), [...rw('work'), { kind: 'ro' as const, path: join(home, 'tool') }]],
    ['#!PREFIX/bin/py -u: the script\'s prefix and the interpreter\'s', () => mounts([join(root, 'scripts', 'bin', 'run')]), [...ro('interp', 'scripts'), ...rw('work')]],
    ['#! PREFIX/bin/py (a space first): the same', () => mounts([join(root, 'scripts3', 'bin', 'run')]), [...ro('interp', 'scripts3'), ...rw('work')]],
    ['#!/usr/bin/env: a system interpreter, nothing more', () => mounts([join(root, 'scripts2', 'bin', 'run')]), [...ro('scripts2'), ...rw('work')]],
    ['#!relative/py: no interpreter', () => mounts([join(root, 'scripts4', 'bin', 'run')]), [...ro('scripts4'), ...rw('work')]],
    ['a link to another prefix: both', () => mounts([join(root, 'links', 'bin', 'tool')]), [...ro('links', 'real'), ...rw('work')]],
    ['not found: nothing for it', () => mounts(['no-such-tool']), [...rw('work')]],
  ];
  for (const [what, got, expected] of rows) it(what, () => expect(sorted(got())).toEqual(sorted(expected)));
});

describe('the code a command line names: its project', () => {
  for (const marker of ['package.json', 'pyproject.toml', 'setup.py', 'requirements.txt', 'deno.json', 'twylt-pack.json']) {
    it(`${marker} marks it`, () => expect(sorted(mounts(['node', join(root, 'projects', marker, 'src', 'deep', 'code.js')]))).toEqual(sorted([...ro(`projects/${marker}`), ...rw('work')])));
  }
  const rows: [string, () => Mount[], Mount[]][] = [
    ['.git marks it', () => mounts(['python3', join(root, 'projects', 'git', 'src', 'code.py')]), [...ro('projects/git'), ...rw('work')]],
    ['no marker up to /: the code\'s folder', () => mounts(['node', join(root, 'plain', 'a', 'code.js')]), [...rw('work'), ...ro('plain/a')]],
    ['a folder argument: the folder\'s project', () => mounts(['node', join(root, 'projects', 'deno.json', 'src')]), [...ro('projects/deno.json'), ...rw('work')]],
    ['relative to the cwd; code inside the writable cwd stays read-only', () => mounts(['node', 'a/code.js'], { cwd: join(root, 'plain') }), [...rw('plain'), ...ro('plain/a')]],
    ['options (-x) and JSON input ({...}) are not paths', () => mounts(['node', `-${join(root, 'plain', 'a', 'code.js')}`, `{${join(root, 'plain', 'a', 'code.js')}`]), [...rw('work')]],
    // A bare command is PATH's: a file of that name in the cwd is not the tool's code (it would be made read-only).
    ['a bare command is not a path in the cwd, even where a file of that name is there (its project not mounted)', () => mounts(['code.js'], { cwd: join(root, 'projects', 'package.json', 'src', 'deep') }), [...rw('projects/package.json/src/deep')]],
    // Even when a folder of that name is there, relative to the cwd.
    ['options and JSON input are not paths, even where a folder -o or {j exists in the cwd', () => mounts(['node', '-o/code.js', '{j/code.js'], { cwd: join(root, 'plain') }), [...rw('plain')]],
    ['a path that does not exist: nothing', () => mounts(['node', join(root, 'nowhere.js')]), [...rw('work')]],
    ['code in HOME/proj/src without a project below HOME: its folder, not HOME (whose package.json is not taken)', () => mounts(['node', join(home, 'proj', 'src', 'code.js')]), [...rw('work'), { kind: 'ro' as const, path: join(home, 'proj', 'src') }]],
    ['code in HOME itself: the file alone', () => mounts(['node', join(home, 'code.js')]), [...rw('work'), { kind: 'ro' as const, path: join(home, 'code.js') }]],
    ['a project and the node_modules above it, in a monorepo: the root project holds both', () => mounts(['node', join(root, 'mono', 'apps', 'a', 'main.js')]), [...ro('mono/apps/a'), ...rw('work'), ...ro('mono/node_modules')]],
    ['a relative executable: its own project, and the node_modules above it', () => mounts(['./apps/a/main.js'], { cwd: join(root, 'mono') }), [...rw('mono'), ...ro('mono/apps/a', 'mono/node_modules')]],
    ['a relative executable outside the cwd: its project read-only', () => mounts(['../mono/apps/a/main.js']), [...ro('mono/apps/a'), ...rw('work'), ...ro('mono/node_modules')]],
  ];
  for (const [what, got, expected] of rows) it(what, () => expect(sorted(got())).toEqual(sorted(expected)));
});

describe("the tool's environment, allowRead, allowWrite, workspaces", () => {
  const rows: [string, () => Mount[], Mount[]][] = [
    ['PYTHONPATH: each absolute entry\'s project, else its folder; relative and missing ones ignored', () => mounts(['python3'], { env: { PYTHONPATH: [join(root, 'site'), join(root, 'sitep', 'src'), 'relative', '', join(root, 'missing')].join(':') } }), [...ro('site', 'sitep'), ...rw('work')]],
    // Relative to this process's folder it exists: still not a mount (the tool's cwd is another).
    ['a relative PYTHONPATH entry that exists from the consumer\'s folder: ignored', () => mounts(['python3'], { env: { PYTHONPATH: relative(process.cwd(), join(root, 'site')) } }), [...rw('work')]],
    ['NODE_PATH as well', () => mounts(['node'], { env: { NODE_PATH: join(root, 'site', 'pkg') } }), [...rw('work'), ...ro('site/pkg')]],
    ['allowRead, allowWrite and workspaces, resolved', () => mounts(['node'], { allowRead: [join(root, 'plain')], allowWrite: [join(root, 'site')], workspaces: [join(root, 'sitep')] }), [...ro('plain'), ...rw('work', 'sitep', 'site')]],
    ['what is inside another mount is not mounted again; a writable one wins over the same read-only', () => mounts(['node', join(root, 'plain', 'a', 'code.js')], { allowRead: [join(root, 'plain'), join(root, 'site')], allowWrite: [join(root, 'site')] }), [...ro('plain'), ...rw('work', 'site')]],
    ['a sibling with a common prefix is not inside', () => mounts(['node'], { allowRead: [join(root, 'site'), join(root, 'sitep')] }), [...ro('site', 'sitep'), ...rw('work')]],
    ['deeper mounts come after shallower ones', () => mounts(['node'], { allowRead: [join(root, 'projects', 'git', 'src')], allowWrite: [join(root, 'projects')] }), [...rw('work', 'projects'), ...ro('projects/git/src')]],
  ];
  for (const [what, got, expected] of rows) it(what, () => expect(sorted(got())).toEqual(sorted(expected)));

  const refused: [string, Files][] = [
    ['allowRead /', { allowRead: ['/'] }],
    ['allowWrite HOME', { allowWrite: [home] }],
    ['allowRead the parent of HOME', { allowRead: [root] }],
    ['a workspace that is HOME, written with a trailing slash', { workspaces: [`${home}/`] }],
  ];
  for (const [what, files] of refused) {
    it(`refuses ${what}`, () => {
      const path = files.allowRead?.[0] ?? files.allowWrite?.[0] ?? files.workspaces?.[0];
      const real = path === '/' ? '/' : realpathSync(path!);
      expect(() => mounts(['node'], files)).toThrow(new SandboxPolicyError(`the sandbox refuses to expose ${real}: it is / or holds the home folder ${home}; name a folder inside it`));
    });
  }
  it('the order: a deeper mount after a shallower one, so that it lands on it', () => {
    const list = mounts(['node'], { allowRead: [join(root, 'projects', 'git', 'src')], allowWrite: [join(root, 'projects')] });
    expect(list).toEqual([...rw('work', 'projects'), ...ro('projects/git/src')]);
    const depths = mounts(['node', join(root, 'mono', 'apps', 'a', 'main.js')]).map((mount) => mount.path.split('/').length);
    expect(depths).toEqual([...depths].sort((a, b) => a - b));
  });
  it('a folder beside HOME sharing its prefix (HOME-other) is allowed', () => {
    mkdirSync(`${home}-other`, { recursive: true });
    expect(mounts(['node'], { allowRead: [`${home}-other`] })).toEqual([...ro('home-other'), ...rw('work')]);
  });
  it('SandboxPolicyError is named so', () => expect(new SandboxPolicyError('x').name).toBe('SandboxPolicyError'));
});

describe('the packages a node_modules links to', () => {
  beforeAll(() => {
    // A monorepo's node_modules linking into a package's own node_modules (inside the repository).
    file(join(root, 'mono2', 'package.json'));
    file(join(root, 'mono2', 'apps', 'a', 'package.json'));
    file(join(root, 'mono2', 'apps', 'a', 'main.js'));
    mkdirSync(join(root, 'mono2', 'packages', 'dep', 'node_modules', 'inner'), { recursive: true });
    mkdirSync(join(root, 'mono2', 'node_modules'), { recursive: true });
    symlinkSync(join(root, 'mono2', 'packages', 'dep', 'node_modules', 'inner'), join(root, 'mono2', 'node_modules', 'dep'));
    // A project whose node_modules is a file, not a folder.
    file(join(root, 'nmfile', 'package.json'));
    file(join(root, 'nmfile', 'main.js'));
    file(join(root, 'nmfile', 'node_modules'));
  });
  const rows: [string, () => Mount[], Mount[]][] = [
    ['a link to a package in another node_modules: that node_modules folder (one mount for its packages)', () => mounts(['node', join(root, 'mono2', 'apps', 'a', 'main.js')]), [...ro('mono2/apps/a', 'mono2/node_modules', 'mono2/packages/dep/node_modules'), ...rw('work')]],
    ['a node_modules that is a file: nothing to follow in it', () => mounts(['node', join(root, 'nmfile', 'main.js')]), [...ro('nmfile'), ...rw('work')]],
  ];
  for (const [what, got, expected] of rows) it(what, () => expect(sorted(got())).toEqual(sorted(expected)));
});

describe('findExecutable', () => {
  beforeAll(() => {
    file(join(root, 'path1', 'both'), '', 0o644);
    file(join(root, 'path2', 'both'), '', 0o755);
    mkdirSync(join(root, 'path1', 'dir'), { recursive: true });
    chmodSync(join(root, 'path1', 'dir'), 0o755);
    file(join(root, 'path2', 'dir'), '', 0o755);
  });
  const rows: [string, string, string, string | undefined, string | undefined][] = [
    ['a path with a slash: resolved from the cwd, found or not', 'x/y', work, undefined, join(work, 'x', 'y')],
    ['an absolute path as it is', '/abs/tool', work, undefined, '/abs/tool'],
    ['the first executable file on PATH, skipping a non-executable one', 'both', work, `${join(root, 'path1')}:${join(root, 'path2')}`, join(root, 'path2', 'both')],
    ['a folder of that name is no executable', 'dir', work, `${join(root, 'path1')}:${join(root, 'path2')}`, join(root, 'path2', 'dir')],
    ['empty PATH entries skipped (not the cwd)', 'both', join(root, 'path2'), '::', undefined],
    ['a relative PATH entry from the cwd', 'both', root, 'path2', join(root, 'path2', 'both')],
    ['no PATH', 'both', work, undefined, undefined],
    ['not found', 'nothing-here', work, '/usr/bin', undefined],
  ];
  for (const [what, name, cwd, path, expected] of rows) it(what, () => expect(findExecutable(name, cwd, path)).toBe(expected));
});

describe('systemMounts', () => {
  it('the system folders (links recreated as links), the public files of /etc, nothing private', () => {
    const list = systemMounts();
    const paths = list.map((mount) => mount.path);
    expect(list).toContainEqual({ kind: 'ro', path: '/usr' });
    for (const path of ['/etc/passwd', '/etc/ld.so.cache', '/etc/ssl/certs']) expect(paths).toContain(path);
    for (const path of ['/etc', '/etc/shadow', '/etc/ssl/private', '/etc/ssl', '/root', '/home', '/']) expect(paths).not.toContain(path);
    for (const mount of list) {
      if (mount.kind === 'symlink') expect(['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']).toContain(mount.path);
      else expect(mount.kind).toBe('ro');
    }
    const { lstatSync, readlinkSync, existsSync } = require('node:fs') as typeof import('node:fs');
    for (const path of ['/bin', '/sbin', '/lib', '/lib64']) {
      if (!existsSync(path)) continue;
      const expected = lstatSync(path).isSymbolicLink() ? { kind: 'symlink', path, target: readlinkSync(path) } : { kind: 'ro', path };
      expect(list).toContainEqual(expected);
    }
    for (const path of ['/lib32', '/libx32', '/etc/pki/tls/certs']) if (!existsSync(path)) expect(paths).not.toContain(path);
  });

  it('of /etc exactly the listed files and folders that exist here: never /etc itself (with or without its slash), nothing else', () => {
    const { existsSync } = require('node:fs') as typeof import('node:fs');
    const listed = ['ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'alternatives', 'passwd', 'group', 'nsswitch.conf', 'hosts', 'localtime', 'timezone', 'mime.types', 'protocols', 'services', 'os-release', 'debian_version', 'gitconfig', 'ca-certificates', 'ca-certificates.conf', 'ssl/certs', 'ssl/openssl.cnf', 'pki/tls/certs', 'pki/ca-trust', 'crypto-policies'];
    const etc = systemMounts().filter((mount) => mount.path.startsWith('/etc'));
    expect(etc).toEqual(listed.map((name) => `/etc/${name}`).filter((path) => existsSync(path)).map((path) => ({ kind: 'ro', path })));
  });
});

describe('links into what is visible already, and a real node_modules above the code in HOME', () => {
  const home2 = join(root, 'home2');
  beforeAll(() => {
    // A project whose node_modules links into the writable workspace and into a system folder.
    file(join(root, 'lp', 'package.json'));
    file(join(root, 'lp', 'main.js'));
    mkdirSync(join(work, 'pkg'), { recursive: true });
    mkdirSync(join(root, 'lp', 'node_modules'), { recursive: true });
    symlinkSync(join(work, 'pkg'), join(root, 'lp', 'node_modules', 'w'));
    symlinkSync('/usr/lib', join(root, 'lp', 'node_modules', 'sys'));
    // HOME with packages installed in its own node_modules (a real folder), and a project below it.
    file(join(home2, 'proj', 'package.json'));
    file(join(home2, 'proj', 'main.js'));
    mkdirSync(join(home2, 'node_modules', 'dep'), { recursive: true });
    // A scoped package (@scope/name) linked to a package of the same repository.
    mkdirSync(join(root, 'mono2', 'packages', 'scoped'), { recursive: true });
    mkdirSync(join(root, 'mono2', 'node_modules', '@sc'), { recursive: true });
    symlinkSync(join(root, 'mono2', 'packages', 'scoped'), join(root, 'mono2', 'node_modules', '@sc', 'pkg'));
  });
  let savedHome2: string | undefined;
  beforeEach(() => {
    savedHome2 = process.env.HOME;
    process.env.HOME = home2;
  });
  afterEach(() => {
    process.env.HOME = savedHome2;
  });

  it('a link into the writable workspace or a system folder is followed (mounted read-only, inside what the tool sees already)', () => {
    process.env.HOME = home;
    expect(mounts(['node', join(root, 'lp', 'main.js')])).toEqual([{ kind: 'ro', path: '/usr/lib' }, ...ro('lp'), ...rw('work'), ...ro('work/pkg')]);
  });

  it('a scoped package (@scope/name) links like any other: followed inside the repository', () => {
    process.env.HOME = home;
    expect(sorted(mounts(['node', join(root, 'mono2', 'apps', 'a', 'main.js')]))).toEqual(
      sorted([...ro('mono2/apps/a', 'mono2/node_modules', 'mono2/packages/dep/node_modules', 'mono2/packages/scoped'), ...rw('work')]),
    );
  });

  it('a dangling link in a node_modules: skipped, no failure', () => {
    process.env.HOME = home;
    mkdirSync(join(root, 'dangle', 'node_modules'), { recursive: true });
    file(join(root, 'dangle', 'package.json'));
    file(join(root, 'dangle', 'main.js'));
    symlinkSync(join(root, 'no-such-target'), join(root, 'dangle', 'node_modules', 'gone'));
    expect(sorted(mounts(['node', join(root, 'dangle', 'main.js')]))).toEqual(sorted([...ro('dangle'), ...rw('work')]));
  });

  it('an absolute command that does not exist: its would-be prefix (bwrap then reports the missing source), no failure here', () => {
    process.env.HOME = home;
    expect(sorted(mounts([join(root, 'nowhere', 'bin', 'tool')]))).toEqual(sorted([...ro('nowhere'), ...rw('work')]));
  });

  it("a #! interpreter that is a link: its own prefix and its target's", () => {
    process.env.HOME = home;
    file(join(root, 'itarget', 'bin', 'py'), '', 0o755);
    mkdirSync(join(root, 'ilink', 'bin'), { recursive: true });
    symlinkSync(join(root, 'itarget', 'bin', 'py'), join(root, 'ilink', 'bin', 'py'));
    file(join(root, 'iscript', 'bin', 'run'), `#!${join(root, 'ilink', 'bin', 'py')}\n`, 0o755);
    expect(sorted(mounts([join(root, 'iscript', 'bin', 'run')]))).toEqual(sorted([...ro('ilink', 'iscript', 'itarget'), ...rw('work')]));
  });

  it("a first line with #! not at its start names no interpreter", () => {
    process.env.HOME = home;
    file(join(root, 'notshebang', 'bin', 'run'), `echo #!${join(root, 'interp', 'bin', 'py')}\n`, 0o755);
    expect(sorted(mounts([join(root, 'notshebang', 'bin', 'run')]))).toEqual(sorted([...ro('notshebang'), ...rw('work')]));
  });

  it('an absolute command that cannot be opened (a socket: ENXIO, as root too): no #! read, its prefix, no failure', async () => {
    process.env.HOME = home;
    const { createServer } = await import('node:net');
    const socket = join(root, 'sockcmd', 'bin', 'tool');
    mkdirSync(dirname(socket), { recursive: true });
    const server = createServer();
    await new Promise<void>((done) => server.listen(socket, done));
    try {
      expect(sorted(mounts([socket]))).toEqual(sorted([...ro('sockcmd'), ...rw('work')]));
    } finally {
      await new Promise((done) => server.close(done));
    }
  });

  it('reading a #! line leaves no descriptor open', () => {
    process.env.HOME = home;
    const { readdirSync } = require('node:fs') as typeof import('node:fs');
    const before = readdirSync('/proc/self/fd').length;
    for (let i = 0; i < 50; i++) mounts([join(root, 'scripts', 'bin', 'run')]);
    expect(readdirSync('/proc/self/fd').length).toBeLessThan(before + 10);
  });

  it('a PYTHONPATH entry that is a file (a zip) outside any project: its folder', () => {
    process.env.HOME = home;
    file(join(root, 'zips', 'lib.zip'));
    expect(sorted(mounts(['python3'], { env: { PYTHONPATH: join(root, 'zips', 'lib.zip') } }))).toEqual(sorted([...ro('zips'), ...rw('work')]));
  });

  it('a HOME that does not exist: / still refused, other paths allowed', () => {
    process.env.HOME = join(root, 'no-such-home');
    expect(() => mounts(['node'], { allowRead: ['/'] })).toThrow(new SandboxPolicyError(`the sandbox refuses to expose /: it is / or holds the home folder undefined; name a folder inside it`));
    expect(sorted(mounts(['node'], { allowRead: [join(root, 'plain')] }))).toEqual(sorted([...ro('plain'), ...rw('work')]));
  });

  it("code below HOME: HOME's own node_modules folder is mounted (Node.js looks there), HOME itself never", () => {
    expect(sorted(mounts(['node', join(home2, 'proj', 'main.js')]))).toEqual(sorted([...ro('home2/proj', 'home2/node_modules'), ...rw('work')]));
  });
});
