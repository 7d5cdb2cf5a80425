/**
 * The sandbox's pure rules as tables (issue 34): which host files a tool's mounts reach
 * (toolMounts on a temporary tree with links in and out of a pack, HOME pointed at a folder
 * with a planted key), the home-folder and `/` rule, the allowed-host matcher, and which
 * addresses a wildcard entry never reaches. The end-to-end rows are in hostile-files.test.ts
 * and proxy.test.ts.
 */
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SandboxPolicyError, toolMounts, type Mount } from '../../packages/twylt/src/toolset/sandbox/files.js';
import { hostAllowed, hostMatch, isInternalAddress } from '../../packages/twylt/src/toolset/sandbox/proxy.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'twylt-sandbox-paths-')));
const home = join(root, 'home');
const key = join(home, '.ssh', 'id_ed25519');
const local = join(home, '.local');
const pack = join(root, 'packs', 'evil');
const repo = join(root, 'repo');
const outside = join(root, 'outside', 'pkg');
const savedHome = process.env.HOME;

function file(path: string, text: string, mode = 0o644): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  chmodSync(path, mode);
}

function link(target: string, path: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  symlinkSync(target, path);
}

beforeAll(() => {
  file(key, 'PLANTED KEY', 0o600);
  file(join(local, 'bin', 'x'), '#!/bin/sh\necho x\n', 0o755);
  // A pack whose own files point out of it, in every way a path can be chosen.
  file(join(pack, 'package.json'), '{"name": "evil"}');
  file(join(pack, 'tool.js'), 'console.log(1)');
  file(join(pack, 'lib', 'ok', 'index.js'), 'module.exports = 1');
  link(join(home, '.ssh'), join(pack, 'node_modules', 'x'));
  link(local, join(pack, 'node_modules', '@scope', 'y'));
  link('../lib/ok', join(pack, 'node_modules', 'ok'));
  link(key, join(pack, 'link-out.js'));
  link(join(local, 'bin', 'x'), join(pack, 'bin', 'x'));
  file(join(pack, 'bin', 'keyed'), `#!${key}\n`, 0o755);
  file(join(pack, 'bin', 'localed'), `#!${join(local, 'bin', 'x')}\n`, 0o755);
  // A pack whose node_modules itself is a link out.
  file(join(root, 'packs', 'modlink', 'package.json'), '{}');
  file(join(root, 'packs', 'modlink', 'tool.js'), '');
  link(join(home, '.ssh'), join(root, 'packs', 'modlink', 'node_modules'));
  // A project in HOME, under HOME's own node_modules (its holder is HOME: links followed nowhere new).
  file(join(home, 'proj', 'package.json'), '{}');
  file(join(home, 'proj', 'tool.js'), '');
  link(join(home, '.ssh'), join(home, 'node_modules', 'z'));
  // And a node_modules that is a link to ~/.ssh in a folder above HOME.
  link(join(home, '.ssh'), join(root, 'node_modules'));
  // npm workspaces: /repo/node_modules/b -> ../packages/b, and one link out of the repository.
  file(join(repo, 'package.json'), '{"workspaces": ["packages/*"]}');
  file(join(repo, 'packages', 'a', 'package.json'), '{}');
  file(join(repo, 'packages', 'a', 'tool.js'), '');
  file(join(repo, 'packages', 'b', 'package.json'), '{}');
  file(join(outside, 'package.json'), '{}');
  link('../packages/b', join(repo, 'node_modules', 'b'));
  link(outside, join(repo, 'node_modules', 'c'));
  link(outside, join(root, 'site'));
  mkdirSync(join(root, 'work'));
  mkdirSync(join(root, 'ho'));
  mkdirSync(join(root, 'home-other'));
  process.env.HOME = home;
});

afterAll(() => {
  process.env.HOME = savedHome;
  rmSync(root, { recursive: true, force: true });
});

/** Whether a tool with these mounts sees `path` (it is inside a bind mount). */
function sees(mounts: Mount[], path: string): boolean {
  return mounts.some((mount) => mount.kind !== 'symlink' && (path === mount.path || path.startsWith(mount.path + sep)));
}

function mountsOf(command: string[], options: { cwd?: string; allowRead?: string[]; path?: string; pythonPath?: string } = {}): Mount[] {
  return toolMounts({
    command,
    cwd: options.cwd ?? join(root, 'work'),
    workspaces: [],
    env: { PATH: options.path ?? '/usr/bin:/bin', PYTHONPATH: options.pythonPath },
    allowRead: options.allowRead ?? [],
    allowWrite: [],
  });
}

describe('toolMounts: a path the tool chooses reaches only what is allowed', () => {
  const rows: [string, () => Mount[], string, boolean][] = [
    ['node_modules/x -> ~/.ssh: the key is not mounted', () => mountsOf(['node', join(pack, 'tool.js')]), key, false],
    ['node_modules/@scope/y -> ~/.local: not mounted', () => mountsOf(['node', join(pack, 'tool.js')]), join(local, 'bin', 'x'), false],
    ['node_modules/ok -> ../lib/ok (inside the pack): mounted', () => mountsOf(['node', join(pack, 'tool.js')]), join(pack, 'lib', 'ok', 'index.js'), true],
    ['a node_modules that is itself a link to ~/.ssh: not mounted', () => mountsOf(['node', join(root, 'packs', 'modlink', 'tool.js')]), key, false],
    ["HOME's own node_modules/z -> ~/.ssh, and a node_modules -> ~/.ssh above HOME, over a project in HOME: not mounted", () => mountsOf(['node', join(home, 'proj', 'tool.js')]), key, false],
    ['npm workspaces: /repo/node_modules/b -> ../packages/b: mounted', () => mountsOf(['node', join(repo, 'packages', 'a', 'tool.js')]), join(repo, 'packages', 'b', 'package.json'), true],
    ['a workspace link out of the repository: not mounted', () => mountsOf(['node', join(repo, 'packages', 'a', 'tool.js')]), join(outside, 'package.json'), false],
    ['a workspace link out of the repository, into a folder allowed to read: mounted', () => mountsOf(['node', join(repo, 'packages', 'a', 'tool.js')], { allowRead: [outside] }), join(outside, 'package.json'), true],
    ['an argument linking to ~/.ssh/id_ed25519: not mounted, its pack is', () => mountsOf(['node', 'link-out.js'], { cwd: pack }), key, false],
    ['an argument linking out: its own pack is mounted', () => mountsOf(['node', 'link-out.js'], { cwd: pack }), join(pack, 'tool.js'), true],
    ['a relative executable ./bin/x -> ~/.local/bin/x: ~/.local not mounted', () => mountsOf(['./bin/x'], { cwd: pack }), join(local, 'bin', 'x'), false],
    ['a script with #!~/.ssh/id_ed25519: ~/.ssh not mounted', () => mountsOf(['./bin/keyed'], { cwd: pack }), key, false],
    ['a script with #!~/.local/bin/x: ~/.local not mounted', () => mountsOf(['./bin/localed'], { cwd: pack }), join(local, 'bin', 'x'), false],
    ["the consumer's PATH lookup stays trusted: x found in ~/.local/bin mounts its prefix", () => mountsOf(['x'], { path: join(local, 'bin') }), join(local, 'bin', 'x'), true],
    ["the entry's PYTHONPATH is the consumer's choice: a linked entry mounts its target", () => mountsOf(['python3', join(pack, 'tool.js')], { pythonPath: join(root, 'site') }), join(outside, 'package.json'), true],
  ];
  for (const [name, mounts, path, expected] of rows) {
    it(name, () => {
      const list = mounts();
      expect(sees(list, path), JSON.stringify(list, null, 1)).toBe(expected);
    });
  }

  it('no mount ever holds the home folder or /', () => {
    for (const [, mounts] of rows) {
      for (const mount of mounts()) {
        if (mount.kind === 'symlink') continue;
        expect(mount.path).not.toBe('/');
        expect(home === mount.path || home.startsWith(mount.path + sep), mount.path).toBe(false);
      }
    }
  });
});

describe('the home folder and / are never mounted, even when asked', () => {
  const refused: [string, { cwd?: string; allowRead?: string[] }][] = [
    ['allowRead HOME', { allowRead: [home] }],
    ['allowRead HOME/ (a trailing slash)', { allowRead: [`${home}/`] }],
    ['allowRead an ancestor of HOME', { allowRead: [root] }],
    ['allowRead /', { allowRead: ['/'] }],
    ['a workspace above HOME', { cwd: root }],
    ['a workspace that is HOME', { cwd: home }],
    ['a workspace that is /', { cwd: '/' }],
  ];
  for (const [name, options] of refused) {
    it(`refuses ${name}`, () => {
      expect(() => mountsOf(['node', join(repo, 'packages', 'a', 'tool.js')], options)).toThrow(SandboxPolicyError);
      expect(() => mountsOf(['node', join(repo, 'packages', 'a', 'tool.js')], options)).toThrow(/refuses to expose .*holds the home folder/);
    });
  }
  const allowed: [string, { cwd?: string; allowRead?: string[] }, string][] = [
    ['allowRead a folder inside HOME', { allowRead: [join(home, 'proj')] }, join(home, 'proj')],
    ['allowRead a sibling whose name is a prefix of HOME (root/ho)', { allowRead: [join(root, 'ho')] }, join(root, 'ho')],
    ['allowRead a sibling that starts with HOME\'s name (root/home-other)', { allowRead: [join(root, 'home-other')] }, join(root, 'home-other')],
    ['a workspace inside HOME', { cwd: join(home, 'proj') }, join(home, 'proj')],
  ];
  for (const [name, options, path] of allowed) {
    it(`allows ${name}`, () => {
      const mounts = mountsOf(['node', join(repo, 'packages', 'a', 'tool.js')], options);
      expect(sees(mounts, path)).toBe(true);
      expect(sees(mounts, key)).toBe(false);
    });
  }
});

describe('hostAllowed: the allowed-host matcher', () => {
  const rows: [string[], string, number, boolean][] = [
    [['example.com'], 'example.com', 443, true],
    [['example.com'], 'example.com', 80, true],
    [['example.com'], 'example.com', 8080, false],
    [['example.com'], 'EXAMPLE.com', 443, true],
    [['Example.COM'], 'example.com', 443, true],
    [['example.com'], 'www.example.com', 443, false],
    [['example.com'], 'evilexample.com', 443, false],
    [['example.com:8080'], 'example.com', 8080, true],
    [['example.com:8080'], 'example.com', 443, false],
    [['*.example.com'], 'api.example.com', 443, true],
    [['*.example.com'], 'a.b.example.com', 80, true],
    [['*.example.com'], 'API.Example.Com', 443, true],
    [['*.example.com'], 'example.com', 443, false],
    [['*.example.com'], 'evilexample.com', 443, false],
    [['*.example.com'], '.example.com', 443, false],
    [['*.example.com'], 'example.com.evil.net', 443, false],
    [['*.example.com'], 'api.example.com', 8443, false],
    [['*.example.com:8443'], 'api.example.com', 8443, true],
    [['*.example.com:8443'], 'api.example.com', 443, false],
    [['127.0.0.1:3000'], '127.0.0.1', 3000, true],
    [['127.0.0.1:3000'], '127.0.0.2', 3000, false],
    [['[::1]:8080'], '[::1]', 8080, true],
    [['[::1]:8080'], '::1', 8080, true],
    [['[::1]:8080'], '::1', 443, false],
    [['[::1]'], '::1', 443, true],
    [['::1'], '::1', 443, true],
    [['::1'], '::1', 1, false],
    [['[2001:db8::1]'], '2001:DB8::1', 80, true],
    [[], 'example.com', 443, false],
  ];
  for (const [allowed, host, port, expected] of rows) {
    it(`${JSON.stringify(allowed)} ${expected ? 'allows' : 'refuses'} ${host}:${port}`, () => {
      expect(hostAllowed(allowed, host, port)).toBe(expected);
    });
  }

  it('says whether an exact entry or only a wildcard lets a host through', () => {
    expect(hostMatch(['*.example.com'], 'api.example.com', 443)).toBe('wildcard');
    expect(hostMatch(['*.example.com', 'api.example.com'], 'api.example.com', 443)).toBe('exact');
    expect(hostMatch(['api.example.com', '*.example.com'], 'api.example.com', 443)).toBe('exact');
    expect(hostMatch(['*.0.0.1'], '127.0.0.1', 80)).toBe('wildcard');
    expect(hostMatch(['*.example.com'], 'example.org', 443)).toBeUndefined();
  });
});

describe('isInternalAddress: what a wildcard entry never reaches', () => {
  const rows: [string, boolean][] = [
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['172.31.255.255', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['8.8.8.8', false],
    ['93.184.216.34', false],
    ['::1', true],
    ['::', true],
    ['fe80::1', true],
    ['fd00::1', true],
    ['fc00::1', true],
    ['ff02::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::ffff:10.0.0.1', true],
    ['::ffff:8.8.8.8', false],
    ['64:ff9b::10.0.0.1', true],
    ['2001:4860:4860::8888', false],
    ['not an address', true],
  ];
  for (const [address, expected] of rows) {
    it(`${address}: ${expected ? 'internal' : 'public'}`, () => {
      expect(isInternalAddress(address)).toBe(expected);
    });
  }
});
