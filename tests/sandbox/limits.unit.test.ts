/**
 * The cgroup code of limits.ts from the source, against a plain folder tree standing in for
 * /sys/fs/cgroup (docs/mutation.md): the files a call's cgroup writes (v2 and v1 names), the
 * kernel's counters hit() reads, removal and the sweep of dead consumers' cgroups, and
 * findCgroupBase refusing what is not a cgroup filesystem. The real kernel limits are tested
 * end to end by hostile.test.ts and sandbox.test.ts.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isMainThread } from 'node:worker_threads';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { CallCgroup, findCgroupBase, sweepCgroups, type CgroupBase } from '../../packages/twylt/src/toolset/sandbox/limits.js';

const scratch = mkdtempSync(join(tmpdir(), 'twylt-limits-unit-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
// The exit listeners there before limits.ts could add its own (the exit hook of pending removals).
const exitListeners = process.listeners('exit');
let folders = 0;

function folder(): string {
  const dir = join(scratch, `base-${++folders}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The one call cgroup made under `dir`. */
function only(dir: string): string {
  const names = readdirSync(dir);
  expect(names).toHaveLength(1);
  expect(names[0]).toMatch(new RegExp(`^twylt-${process.pid}-\\d+$`));
  return join(dir, names[0]!);
}

const read = (file: string) => readFileSync(file, 'utf8');

describe('a call cgroup, v2: one folder', () => {
  it('writes memory.max in bytes, memory.swap.max 0 and pids.max, and joins a pid through cgroup.procs', () => {
    const base: CgroupBase = { version: 2, dirs: [folder()] };
    const cgroup = new CallCgroup(base, 3, 7);
    const dir = only(base.dirs[0]!);
    expect(readdirSync(dir).sort()).toEqual(['memory.max', 'memory.swap.max', 'pids.max']);
    expect(read(join(dir, 'memory.max'))).toBe(String(3 * 1024 * 1024));
    expect(read(join(dir, 'memory.swap.max'))).toBe('0');
    expect(read(join(dir, 'pids.max'))).toBe('7');
    cgroup.join(4321);
    expect(read(join(dir, 'cgroup.procs'))).toBe('4321');
  });

  it('0 is no limit: no file for it', () => {
    const only0: [number, number, string[]][] = [
      [0, 0, []],
      [5, 0, ['memory.max', 'memory.swap.max']],
      [0, 5, ['pids.max']],
    ];
    for (const [memory, processes, files] of only0) {
      const base: CgroupBase = { version: 2, dirs: [folder()] };
      new CallCgroup(base, memory, processes);
      expect(readdirSync(only(base.dirs[0]!)).sort()).toEqual(files);
    }
  });

  it('each call its own folder, under the consumer pid and a serial', () => {
    const base: CgroupBase = { version: 2, dirs: [folder()] };
    new CallCgroup(base, 1, 1);
    new CallCgroup(base, 1, 1);
    const names = readdirSync(base.dirs[0]!);
    expect(names).toHaveLength(2);
    const serials = names.map((name) => Number(/^twylt-(\d+)-(\d+)$/.exec(name)![2]));
    expect(Math.abs(serials[0]! - serials[1]!)).toBe(1);
  });

  it('throws when the folder cannot be made (the kernel refuses)', () => {
    expect(() => new CallCgroup({ version: 2, dirs: [join(scratch, 'missing', 'deeper')] }, 1, 1)).toThrow(/ENOENT/);
  });

  const hits: [string, Record<string, string>, string | undefined][] = [
    ['no counter files', {}, undefined],
    ['memory.events oom_kill 0, pids.events max 0', { 'memory.events': 'low 0\nhigh 0\nmax 4\noom 1\noom_kill 0\n', 'pids.events': 'max 0\n' }, undefined],
    ['memory.events oom_kill 1', { 'memory.events': 'low 0\nmax 9\noom 1\noom_kill 1\n' }, 'memory'],
    ['pids.events max 3', { 'pids.events': 'max 3\n' }, 'processes'],
    ['both: memory first', { 'memory.events': 'oom_kill 2\n', 'pids.events': 'max 3\n' }, 'memory'],
    ['a name that only starts the same (oom_kill_x)', { 'memory.events': 'oom_kill_x 5\n', 'pids.events': 'maxed 5\n' }, undefined],
    ['a value that is no number', { 'memory.events': 'oom_kill x\n', 'pids.events': 'max \n' }, undefined],
    ['memory.oom_control is v1 only', { 'memory.oom_control': 'oom_kill 1\n' }, undefined],
  ];
  for (const [what, files, expected] of hits) {
    it(`hit(): ${what}: ${expected ?? 'none'}`, () => {
      const base: CgroupBase = { version: 2, dirs: [folder()] };
      const cgroup = new CallCgroup(base, 0, 0);
      const dir = only(base.dirs[0]!);
      for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
      expect(cgroup.hit()).toBe(expected);
    });
  }
});

describe('a call cgroup, v1: the memory and pids hierarchies', () => {
  it('memory.limit_in_bytes in the memory folder, pids.max in the pids folder, the pid joined in both', () => {
    const base: CgroupBase = { version: 1, dirs: [folder(), folder()] };
    const cgroup = new CallCgroup(base, 2, 9);
    const memory = only(base.dirs[0]!);
    const pids = only(base.dirs[1]!);
    expect(readdirSync(memory)).toEqual(['memory.limit_in_bytes']);
    expect(read(join(memory, 'memory.limit_in_bytes'))).toBe(String(2 * 1024 * 1024));
    expect(readdirSync(pids)).toEqual(['pids.max']);
    expect(read(join(pids, 'pids.max'))).toBe('9');
    cgroup.join(99);
    expect(read(join(memory, 'cgroup.procs'))).toBe('99');
    expect(read(join(pids, 'cgroup.procs'))).toBe('99');
  });

  const hits: [string, [string, string, string][], string | undefined][] = [
    ['none', [], undefined],
    ['memory.oom_control oom_kill 1 in the memory folder', [['memory', 'memory.oom_control', 'oom_kill_disable 0\nunder_oom 0\noom_kill 1\n']], 'memory'],
    ['memory.events is v2 only', [['memory', 'memory.events', 'oom_kill 1\n']], undefined],
    ['pids.events max 1 in the pids folder', [['pids', 'pids.events', 'max 1\n']], 'processes'],
    ['pids.events in the memory folder is not read', [['memory', 'pids.events', 'max 1\n']], undefined],
    ['memory.oom_control in the pids folder is not read', [['pids', 'memory.oom_control', 'oom_kill 1\n']], undefined],
  ];
  for (const [what, files, expected] of hits) {
    it(`hit(): ${what}: ${expected ?? 'none'}`, () => {
      const base: CgroupBase = { version: 1, dirs: [folder(), folder()] };
      const cgroup = new CallCgroup(base, 0, 0);
      const dirs = { memory: only(base.dirs[0]!), pids: only(base.dirs[1]!) };
      for (const [where, name, text] of files) writeFileSync(join(dirs[where as 'memory' | 'pids'], name), text);
      expect(cgroup.hit()).toBe(expected);
    });
  }
});

describe('removal', () => {
  it('remove() removes an empty call cgroup at once, in each hierarchy', () => {
    const base: CgroupBase = { version: 1, dirs: [folder(), folder()] };
    new CallCgroup(base, 0, 0).remove();
    expect(readdirSync(base.dirs[0]!)).toEqual([]);
    expect(readdirSync(base.dirs[1]!)).toEqual([]);
  });

  it('a busy one (not empty yet) is tried again until it can go', async () => {
    const base: CgroupBase = { version: 2, dirs: [folder()] };
    const cgroup = new CallCgroup(base, 0, 4);
    const dir = only(base.dirs[0]!);
    cgroup.remove();
    expect(existsSync(dir)).toBe(true);
    rmSync(join(dir, 'pids.max'));
    // The first retry is 100 ms later (waited for, up to 10 s, however loaded the machine).
    for (const deadline = Date.now() + 10_000; existsSync(dir) && Date.now() < deadline; ) await new Promise((done) => setTimeout(done, 20));
    expect(existsSync(dir)).toBe(false);
  });

  describe('retries, on fake timers', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('an empty call cgroup removed at once leaves no retry behind', () => {
      vi.useFakeTimers();
      const base: CgroupBase = { version: 2, dirs: [folder()] };
      new CallCgroup(base, 0, 0).remove();
      expect(readdirSync(base.dirs[0]!)).toEqual([]);
      expect(vi.getTimerCount()).toBe(0);
    });

    it('a folder already gone (ENOENT) counts as removed: no retry', () => {
      vi.useFakeTimers();
      const base: CgroupBase = { version: 2, dirs: [folder()] };
      const cgroup = new CallCgroup(base, 0, 0);
      rmdirSync(only(base.dirs[0]!));
      cgroup.remove();
      expect(vi.getTimerCount()).toBe(0);
    });

    // [tries that fail before the folder is emptied, the delay of the try that then removes it]
    const tries: [number, number][] = [
      [0, 100],
      [1, 1000],
      [2, 5000],
    ];
    for (const [failed, delay] of tries) {
      it(`after ${failed} failed retries the next comes ${delay} ms later`, () => {
        vi.useFakeTimers();
        const base: CgroupBase = { version: 2, dirs: [folder()] };
        const cgroup = new CallCgroup(base, 0, 4);
        const dir = only(base.dirs[0]!);
        cgroup.remove();
        for (const wait of [100, 1000].slice(0, failed)) vi.advanceTimersByTime(wait);
        expect(existsSync(dir)).toBe(true);
        rmSync(join(dir, 'pids.max'));
        vi.advanceTimersByTime(delay - 1);
        expect(existsSync(dir)).toBe(true);
        vi.advanceTimersByTime(1);
        expect(existsSync(dir)).toBe(false);
        expect(vi.getTimerCount()).toBe(0);
      });
    }

    it('three retries at most, then the folder waits for the exit hook, which removes what is still pending', () => {
      vi.useFakeTimers();
      const base: CgroupBase = { version: 2, dirs: [folder()] };
      const cgroup = new CallCgroup(base, 0, 4);
      const dir = only(base.dirs[0]!);
      cgroup.remove();
      vi.advanceTimersByTime(100 + 1000 + 5000);
      expect(vi.getTimerCount()).toBe(0);
      rmSync(join(dir, 'pids.max'));
      vi.advanceTimersByTime(60_000);
      expect(existsSync(dir)).toBe(true);
      // One hook for the process, however many calls were retried (this file's tests made several).
      const hooks = process.listeners('exit').filter((listener) => !exitListeners.includes(listener));
      expect(hooks).toHaveLength(1);
      hooks[0]!(0);
      expect(existsSync(dir)).toBe(false);
    });

    it('a folder a retry removed is no longer the exit hook\'s', () => {
      vi.useFakeTimers();
      const base: CgroupBase = { version: 2, dirs: [folder()] };
      const cgroup = new CallCgroup(base, 0, 4);
      const dir = only(base.dirs[0]!);
      cgroup.remove();
      rmSync(join(dir, 'pids.max'));
      vi.advanceTimersByTime(100);
      expect(existsSync(dir)).toBe(false);
      // Someone else's folder at that path later: the hook leaves it.
      mkdirSync(dir);
      const hooks = process.listeners('exit').filter((listener) => !exitListeners.includes(listener));
      hooks[0]!(0);
      expect(existsSync(dir)).toBe(true);
    });
  });

  it("sweepCgroups removes the empty cgroups of consumers that are gone, not a live one's, not another name", () => {
    const base: CgroupBase = { version: 1, dirs: [folder(), folder()] };
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const gone = Number(dead.stdout);
    for (const dir of base.dirs) {
      for (const name of [`twylt-${gone}-1`, `twylt-${gone}-2`, `twylt-${gone}-12`, `twylt-${process.pid}-1`, `twylt-1-1`, `other-${gone}-1`, `old-twylt-${gone}-1`, `twylt-${gone}-x`, `twylt-${gone}-3-4`]) mkdirSync(join(dir, name));
    }
    // A dead consumer's busy cgroup stays.
    writeFileSync(join(base.dirs[0]!, `twylt-${gone}-2`, 'cgroup.procs'), '1');
    sweepCgroups({ version: 1, dirs: [...base.dirs, join(scratch, 'no-such-folder')] });
    // pid 1 is alive (init), and as root kill(1, 0) succeeds: kept.
    expect(readdirSync(base.dirs[0]!).sort()).toEqual([`other-${gone}-1`, `old-twylt-${gone}-1`, `twylt-${gone}-2`, `twylt-${gone}-3-4`, `twylt-${gone}-x`, `twylt-${process.pid}-1`, 'twylt-1-1'].sort());
    expect(readdirSync(base.dirs[1]!).sort()).toEqual([`other-${gone}-1`, `old-twylt-${gone}-1`, `twylt-${gone}-3-4`, `twylt-${gone}-x`, `twylt-${process.pid}-1`, 'twylt-1-1'].sort());
  });
  // As root the row below changes its effective uid, which Node.js refuses in a worker thread
  // (Stryker's Vitest runner runs tests in threads; the suite runs them in processes).
  const noSeteuid = process.geteuid?.() === 0 && !isMainThread;
  it.skipIf(noSeteuid)(`a consumer the sweep may not signal (EPERM) is alive: its cgroups stay${noSeteuid ? ' (skipped: as root it needs process.seteuid, refused in a worker thread)' : ''}`, async () => {
    const base: CgroupBase = { version: 2, dirs: [folder()] };
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    // As a user, pid 1 (root's) is one kill(pid, 0) refuses. As root, the sweep runs as nobody
    // (effective uid only, so it can come back) against a process of a third user: kill(2)
    // allows a sender whose real uid (still 0) matches the target's.
    const asRoot = process.geteuid?.() === 0;
    const other = asRoot ? spawn('setpriv', ['--reuid=12345', '--regid=12345', '--clear-groups', 'sleep', '30'], { stdio: 'ignore' }) : undefined;
    try {
      const pid = other?.pid ?? 1;
      for (const name of [`twylt-${pid}-1`, `twylt-${dead.stdout}-1`]) mkdirSync(join(base.dirs[0]!, name));
      if (other) {
        // setpriv has dropped to the third user once the process runs sleep.
        for (let tries = 0; tries < 100 && !/^sleep/.test(readFileSync(`/proc/${pid}/comm`, 'utf8')); tries++) await new Promise((done) => setTimeout(done, 20));
        chmodSync(scratch, 0o755);
        chmodSync(base.dirs[0]!, 0o777);
        process.seteuid!(65534);
      }
      try {
        sweepCgroups(base);
      } finally {
        if (other) process.seteuid!(0);
      }
      expect(readdirSync(base.dirs[0]!)).toEqual([`twylt-${pid}-1`]);
    } finally {
      other?.kill();
    }
  });
});

describe('findCgroupBase', () => {
  const self = (text: string) => {
    const file = join(folder(), 'cgroup');
    writeFileSync(file, text);
    return file;
  };

  it('no /proc/self/cgroup: none', () => {
    expect(findCgroupBase(folder(), join(scratch, 'no-such-file'))).toBeUndefined();
  });

  const plain: [string, string, string[]][] = [
    ['v1 memory and pids on plain folders', '4:memory:/a\n8:pids:/b\n0::/\n', [join('memory', 'a'), join('pids', 'b')]],
    ['v2 on a plain folder (a tmpfs over /sys/fs/cgroup)', '0::/c\n', ['c']],
  ];
  for (const [what, text, dirs] of plain) {
    it(`${what}: none, and nothing made there`, () => {
      const root = folder();
      for (const dir of [...dirs, 'c']) mkdirSync(join(root, dir), { recursive: true });
      writeFileSync(join(root, 'c', 'cgroup.subtree_control'), '', { flag: 'a' });
      expect(findCgroupBase(root, self(text))).toBeUndefined();
      for (const dir of dirs) expect(readdirSync(join(root, dir)).filter((name) => name !== 'cgroup.subtree_control')).toEqual([]);
      expect(read(join(root, 'c', 'cgroup.subtree_control'))).toBe('');
    });
  }

  const half: [string, string][] = [
    ['memory only', '4:memory:/a\n'],
    ['pids only', '8:pids:/b\n'],
  ];
  for (const [what, text] of half) {
    it(`a /proc/self/cgroup naming ${what} of the two v1 controllers: none`, () => {
      const root = folder();
      for (const dir of ['memory/a', 'pids/b']) mkdirSync(join(root, dir), { recursive: true });
      expect(findCgroupBase(root, self(text))).toBeUndefined();
    });
  }

  // What this machine offers, read once without the source (a call of it here, as tests are
  // collected, would make its mutants static for Stryker): its v1 memory and pids folders.
  const procLines = read('/proc/self/cgroup').trim().split('\n').map((line) => line.split(':'));
  const v1Of = (name: string) => procLines.find(([, list]) => list!.split(',').includes(name))?.[2];
  const v1Dirs = v1Of('memory') !== undefined && v1Of('pids') !== undefined ? [join('/sys/fs/cgroup/memory', v1Of('memory')!), join('/sys/fs/cgroup/pids', v1Of('pids')!)] : undefined;
  /** Whether a child folder can be made and removed in each v1 folder (tried without the source). */
  const v1Writable = (() => {
    const probe = `twylt-test-${process.pid}`;
    try {
      for (const dir of v1Dirs ?? []) {
        mkdirSync(join(dir, probe));
        rmdirSync(join(dir, probe));
      }
      return v1Dirs !== undefined;
    } catch {
      return false;
    }
  })();
  const noV1 = v1Writable ? '' : ' (skipped: no writable v1 memory and pids cgroups here; a v2 base has rows in limits-v2.unit)';

  it.skipIf(!v1Writable)(`its defaults read this process's /proc/self/cgroup under /sys/fs/cgroup: a writable v1 memory and pids pair is found${noV1}`, () => {
    expect(findCgroupBase()).toEqual({ version: 1, dirs: v1Dirs });
    // Its own probe folder is gone (other test files' consumers may be probing beside it at this moment).
    for (const dir of v1Dirs!) expect(readdirSync(dir)).not.toContain(`twylt-probe-${process.pid}`);
  });

  // A hybrid host (this one) mounts a cgroup v2 beside its v1 hierarchies, without the memory
  // and pids controllers (v1 holds them): the v2 path runs there up to enabling them, and fails.
  const unified = '/sys/fs/cgroup/unified';
  const hybrid = (() => {
    try {
      return statfsSync(unified).type === 0x63677270 && !/\b(memory|pids)\b/.test(read(join(unified, 'cgroup.controllers'))) && process.getuid?.() === 0;
    } catch {
      return false;
    }
  })();
  it.skipIf(!hybrid)(`a cgroup v2 without the memory and pids controllers (${unified} of a hybrid host, as root): none, and nothing made or enabled there`, () => {
    const before = read(join(unified, 'cgroup.subtree_control'));
    expect(findCgroupBase(unified, self('0::/\n'))).toBeUndefined();
    expect(read(join(unified, 'cgroup.subtree_control'))).toBe(before);
    expect(readdirSync(unified)).not.toContain(`twylt-probe-${process.pid}`);
  });

  it.skipIf(!v1Writable)(`this machine's own v1 cgroup where the probe folder cannot be made (it is there already): none${noV1}`, () => {
    const base = findCgroupBase()!;
    const names = base.dirs.map((dir, index) => dir.slice(`/sys/fs/cgroup/${index === 0 ? 'memory' : 'pids'}`.length) || '/');
    const text = `4:memory:${names[0]}\n8:pids:${names[1]}\n`;
    const blocker = join(base.dirs[0]!, `twylt-probe-${process.pid}`);
    mkdirSync(blocker);
    try {
      expect(findCgroupBase('/sys/fs/cgroup', self(text))).toBeUndefined();
    } finally {
      rmdirSync(blocker);
    }
    expect(findCgroupBase('/sys/fs/cgroup', self(text))).toEqual(base);
  });
});
