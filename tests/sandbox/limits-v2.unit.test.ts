/**
 * findCgroupBase's cgroup v2 path from the source (docs/mutation.md). This machine's cgroups
 * are v1 (a hybrid host), and a plain folder is refused as a cgroup by statfs(2): here statfs
 * is faked for the folders a row declares a cgroup v1 or v2 filesystem, and everything else
 * (reading /proc/self/cgroup, writing cgroup.subtree_control, making the probe folder) is real
 * files. A real delegated cgroup v2 is exercised end to end where a host has one.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

/** Folders statfs reports as a cgroup filesystem of that version (linux/magic.h). */
const cgroupFolders = new Map<string, 1 | 2>();
const MAGIC = { 1: 0x27e0eb, 2: 0x63677270 } as const;

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const statfsSync = ((path: string, options?: object) => {
    const real = fs.statfsSync(path, options as never) as ReturnType<typeof fs.statfsSync>;
    const version = cgroupFolders.get(String(path).replace(/(.)\/$/, '$1'));
    return version === undefined ? real : { ...real, type: MAGIC[version] };
  }) as typeof fs.statfsSync;
  return { ...fs, default: { ...fs, statfsSync }, statfsSync };
});

const { findCgroupBase } = await import('../../packages/twylt/src/toolset/sandbox/limits.js');

const scratch = mkdtempSync(join(tmpdir(), 'twylt-limits-v2-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let roots = 0;

/** A stand-in for /sys/fs/cgroup with `dirs` made, and a /proc/self/cgroup reading `text`. */
function host(text: string, dirs: string[]): { root: string; self: string } {
  const root = join(scratch, `root-${++roots}`);
  mkdirSync(root);
  for (const dir of dirs) mkdirSync(join(root, dir), { recursive: true });
  const self = join(scratch, `cgroup-${roots}`);
  writeFileSync(self, text);
  return { root, self };
}

/** A folder of `root` made a cgroup v2 the consumer may delegate: its cgroup.subtree_control exists, empty. */
function delegated(root: string, dir: string): string {
  const path = join(root, dir);
  cgroupFolders.set(path, 2);
  writeFileSync(join(path, 'cgroup.subtree_control'), '');
  return path;
}

const control = (dir: string) => readFileSync(join(dir, 'cgroup.subtree_control'), 'utf8');
const probe = `twylt-probe-${process.pid}`;

describe('findCgroupBase on a cgroup v2', () => {
  it('the folder after "0::" under the root: memory and pids enabled for its children, a probe folder made and removed', () => {
    const { root, self } = host('0::/user.slice/consumer\n', ['user.slice/consumer']);
    const dir = delegated(root, 'user.slice/consumer');
    expect(findCgroupBase(root, self)).toEqual({ version: 2, dirs: [dir] });
    expect(control(dir)).toBe('+memory +pids');
    expect(readdirSync(dir)).toEqual(['cgroup.subtree_control']);
  });

  it('"0::/", the root itself; other lines before it are read past', () => {
    const { root, self } = host('12:rdma:/\n1:name=systemd:/x\n0::/\n', []);
    delegated(root, '');
    expect(findCgroupBase(root, self)).toEqual({ version: 2, dirs: [join(root, '/')] });
    expect(control(root)).toBe('+memory +pids');
  });

  it('a "0::" that does not start its line is not the v2 line: none', () => {
    const { root, self } = host('9:0::/a\n', ['a']);
    delegated(root, 'a');
    expect(findCgroupBase(root, self)).toBeUndefined();
    expect(control(join(root, 'a'))).toBe('');
  });

  it('no v2 line and no v1 pair: none', () => {
    const { root, self } = host('4:cpu:/a\n', ['a']);
    delegated(root, 'a');
    expect(findCgroupBase(root, self)).toBeUndefined();
    expect(control(join(root, 'a'))).toBe('');
  });

  it('a v2 folder on a cgroup v1 filesystem (another version): none, nothing enabled', () => {
    const { root, self } = host('0::/a\n', ['a']);
    const dir = delegated(root, 'a');
    cgroupFolders.set(dir, 1);
    expect(findCgroupBase(root, self)).toBeUndefined();
    expect(control(dir)).toBe('');
  });

  it('a cgroup without cgroup.subtree_control: none, and the file is not created', () => {
    const { root, self } = host('0::/a\n', ['a']);
    cgroupFolders.set(join(root, 'a'), 2);
    expect(findCgroupBase(root, self)).toBeUndefined();
    expect(existsSync(join(root, 'a', 'cgroup.subtree_control'))).toBe(false);
    expect(readdirSync(join(root, 'a'))).toEqual([]);
  });

  it('controllers the kernel will not enable (the write fails): none, no probe folder made', () => {
    const { root, self } = host('0::/a\n', ['a/cgroup.subtree_control']);
    cgroupFolders.set(join(root, 'a'), 2);
    expect(findCgroupBase(root, self)).toBeUndefined();
    expect(readdirSync(join(root, 'a'))).toEqual(['cgroup.subtree_control']);
  });

  it('a folder where no child cgroup can be made (the probe is there already): none', () => {
    const { root, self } = host('0::/a\n', [`a/${probe}`]);
    delegated(root, 'a');
    expect(findCgroupBase(root, self)).toBeUndefined();
  });

  it('v1 named but not usable (plain folders): the v2 line is tried next', () => {
    const { root, self } = host('4:memory:/m\n8:pids:/p\n0::/a\n', ['memory/m', 'pids/p', 'a']);
    const dir = delegated(root, 'a');
    expect(findCgroupBase(root, self)).toEqual({ version: 2, dirs: [dir] });
    expect(readdirSync(join(root, 'memory', 'm'))).toEqual([]);
  });

  it('v1 usable: v1, and the v2 line is not touched', () => {
    const { root, self } = host('4:memory:/m\n8:pids:/p\n0::/a\n', ['memory/m', 'pids/p', 'a']);
    for (const dir of ['memory/m', 'pids/p']) cgroupFolders.set(join(root, dir), 1);
    const v2 = delegated(root, 'a');
    expect(findCgroupBase(root, self)).toEqual({ version: 1, dirs: [join(root, 'memory/m'), join(root, 'pids/p')] });
    expect(control(v2)).toBe('');
  });
});
