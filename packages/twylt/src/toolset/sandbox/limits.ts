/**
 * Memory and process limits of one sandboxed call, as a cgroup of its own (ADR 0032): the
 * kernel counts every process and thread of the call together, root included (RLIMIT_NPROC
 * does not bind root), and records when a limit was hit. The call's cgroup is made under the
 * consumer's own (so a container's limits still hold), joined by the sandbox's first process
 * before the tool starts (bwrap.ts), and removed when the call ends.
 *
 * cgroup v2 where the consumer may enable memory and pids for its children; else v1's
 * `memory` and `pids` hierarchies (a hybrid host). Where neither is writable, the limits
 * fall back to per-process rlimits (bwrap.ts).
 */
import { mkdirSync, readdirSync, readFileSync, rmdirSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type LimitName = 'memory' | 'processes' | 'cpu_time';

const CGROUP_ROOT = '/sys/fs/cgroup';
/** statfs(2) types: cgroup v1's and v2's filesystems (linux/magic.h). */
const CGROUP_MAGIC = { 1: 0x27e0eb, 2: 0x63677270 } as const;

/** Where per-call cgroups are made: one folder (v2) or one per controller (v1). */
export interface CgroupBase {
  version: 1 | 2;
  /** v2: [dir]; v1: [memory dir, pids dir]. */
  dirs: string[];
}

let serial = 0;

/**
 * The consumer's cgroup folders, if it may make children there with both limits; else undefined.
 * `root` and `self` (where cgroups are mounted, the process's /proc/self/cgroup) for tests.
 */
export function findCgroupBase(root = CGROUP_ROOT, self = '/proc/self/cgroup'): CgroupBase | undefined {
  let lines: string[];
  try {
    lines = readFileSync(self, 'utf8').trim().split('\n');
  } catch {
    return undefined;
  }
  const pathOf = (controller: string) => lines.map((line) => line.split(':')).find(([, controllers]) => controllers!.split(',').includes(controller))?.[2];
  const v1 = { memory: pathOf('memory'), pids: pathOf('pids') };
  if (v1.memory !== undefined && v1.pids !== undefined) {
    const dirs = [join(root, 'memory', v1.memory), join(root, 'pids', v1.pids)];
    if (tryBase(dirs, 1)) return { version: 1, dirs };
  }
  const v2 = lines.find((line) => line.startsWith('0::'))?.slice(3);
  if (v2 !== undefined) {
    const dir = join(root, v2);
    try {
      // Only where a cgroup v2 is mounted: on a plain folder (a tmpfs over /sys/fs/cgroup) the
      // limits would be files nobody reads. `r+`: never create the file.
      if (!isCgroup(dir, 2)) return undefined;
      writeFileSync(join(dir, 'cgroup.subtree_control'), '+memory +pids', { flag: 'r+' });
      if (tryBase([dir], 2)) return { version: 2, dirs: [dir] };
    } catch {
      // not delegated to us
    }
  }
  return undefined;
}

/** Whether `dir` is on a cgroup filesystem of that version. */
function isCgroup(dir: string, version: 1 | 2): boolean {
  try {
    return statfsSync(dir).type === CGROUP_MAGIC[version];
  } catch {
    // Stryker disable next-line BooleanLiteral: statfs fails only on a folder that cannot be reached, where the next step fails as well (writing cgroup.subtree_control, making the probe folder): no base either way
    return false;
  }
}

/** Whether each of `dirs` is a cgroup where a child cgroup can be made and removed. */
function tryBase(dirs: string[], version: 1 | 2): boolean {
  const name = `twylt-probe-${process.pid}`;
  try {
    for (const dir of dirs) {
      if (!isCgroup(dir, version)) return false;
      mkdirSync(join(dir, name));
      rmdirSync(join(dir, name));
    }
    return true;
  } catch {
    return false;
  }
}

/** The cgroup of one call. */
export class CallCgroup {
  readonly #base: CgroupBase;
  readonly #dirs: string[];

  /** Make the call's cgroup with its limits (0: none). Throws if the kernel refuses. */
  constructor(base: CgroupBase, memoryMb: number, processes: number) {
    this.#base = base;
    const name = `twylt-${process.pid}-${++serial}`;
    this.#dirs = base.dirs.map((dir) => join(dir, name));
    for (const dir of this.#dirs) mkdirSync(dir);
    const [memoryDir, pidsDir] = base.version === 1 ? this.#dirs : [this.#dirs[0]!, this.#dirs[0]!];
    if (memoryMb > 0) {
      const bytes = String(memoryMb * 1024 * 1024);
      if (base.version === 1) writeFileSync(join(memoryDir!, 'memory.limit_in_bytes'), bytes);
      else {
        writeFileSync(join(memoryDir!, 'memory.max'), bytes);
        // No swap to spill into: the limit is the limit.
        try {
          writeFileSync(join(memoryDir!, 'memory.swap.max'), '0');
        } catch {
          // no swap accounting
        }
      }
    }
    if (processes > 0) writeFileSync(join(pidsDir!, 'pids.max'), String(processes));
  }

  /** Put a process (the sandbox's first) in the call's cgroup; its descendants follow. */
  join(pid: number): void {
    for (const dir of this.#dirs) writeFileSync(join(dir, 'cgroup.procs'), String(pid));
  }

  /** The limit the call ran into, if any: the kernel's own counters. */
  hit(): LimitName | undefined {
    const [memoryDir, pidsDir] = this.#base.version === 1 ? this.#dirs : [this.#dirs[0]!, this.#dirs[0]!];
    const memoryFile = this.#base.version === 1 ? 'memory.oom_control' : 'memory.events';
    if (counter(join(memoryDir!, memoryFile), 'oom_kill') > 0) return 'memory';
    if (counter(join(pidsDir!, 'pids.events'), 'max') > 0) return 'processes';
    return undefined;
  }

  /**
   * Remove the call's cgroup. Its last processes may still be on their way out (exited, not
   * yet reaped): what is busy is tried again, and at the consumer's exit; a consumer that was
   * killed leaves its folders to the next consumer's sweep (sweepCgroups).
   */
  remove(): void {
    const leftover = this.#dirs.filter((dir) => !removed(dir));
    if (leftover.length > 0) retry(leftover, 0);
  }
}

/** Folders still to remove, and the delays between tries. */
const pending = new Set<string>();
const RETRY_MS = [100, 1000, 5000];
let exitHook = false;

function retry(dirs: string[], attempt: number): void {
  for (const dir of dirs) pending.add(dir);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const dir of pending) removed(dir);
    });
  }
  setTimeout(() => {
    const left = dirs.filter((dir) => !removed(dir));
    for (const dir of dirs) if (!left.includes(dir)) pending.delete(dir);
    if (left.length > 0 && attempt + 1 < RETRY_MS.length) retry(left, attempt + 1);
  }, RETRY_MS[attempt]).unref();
}

/** Remove the empty call cgroups of consumers that are gone (killed before they could). */
export function sweepCgroups(base: CgroupBase): void {
  for (const dir of base.dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = /^twylt-(\d+)-\d+$/.exec(name)?.[1];
      if (pid !== undefined && !alive(Number(pid))) removed(join(dir, name));
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function removed(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** `name N` in a flat-keyed cgroup file; 0 when absent or unreadable. */
function counter(file: string, name: string): number {
  try {
    const line = readFileSync(file, 'utf8')
      .split('\n')
      .find((text) => text.startsWith(`${name} `));
    return line ? Number(line.slice(name.length + 1)) || 0 : 0;
  } catch {
    return 0;
  }
}
