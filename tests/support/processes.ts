/** Watching the processes a test started: alive or gone, waiting on stdin, bytes read. */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Is a process still there? A zombie (exited, not yet reaped) counts as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (macOS): kill(0) said it exists
  }
}

/** Wait until `pid` is gone, up to `ms`; true when it is. */
export async function waitGone(pid: number, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return !isAlive(pid);
}

/** `pid` and every process below it (Linux: /proc/PID/task/PID/children). */
function family(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    // gone, or no /proc
  }
  return [pid, ...children.flatMap(family)];
}

/** Does `pid` wait in epoll for data on its descriptor `target`? (its epoll instance lists it). */
function polls(pid: number, target: number): boolean {
  const entry = new RegExp(`^tfd:\\s+${target}\\s`, 'm');
  try {
    for (const fd of readdirSync(`/proc/${pid}/fdinfo`)) {
      if (entry.test(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'))) return true;
    }
  } catch {
    // ended meanwhile
  }
  return false;
}

/** read(2)'s system call number, as /proc/PID/task/TID/syscall shows it (Linux x64, arm64). */
const READ_SYSCALL = process.arch === 'arm64' ? 63 : 0;

/**
 * Is a thread of `pid` blocked in read(2) on its descriptor `target`, or on a copy of it?
 * (How Deno waits on stdin: a worker thread reads a duplicate of fd 0.)
 */
function blockedReading(pid: number, target: number): boolean {
  try {
    const file = readlinkSync(`/proc/${pid}/fd/${target}`);
    const copies = readdirSync(`/proc/${pid}/fd`).filter((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`) === file);
    const calls = copies.map((fd) => `${READ_SYSCALL} 0x${Number(fd).toString(16)} `);
    return readdirSync(`/proc/${pid}/task`).some((task) => {
      const syscall = readFileSync(`/proc/${pid}/task/${task}/syscall`, 'utf8');
      return calls.some((call) => syscall.startsWith(call));
    });
  } catch {
    return false; // ended meanwhile
  }
}

/** Does `pid` wait for data on its stdin: in epoll (Node, Bun), or in a worker thread's read (Deno)? */
const waitsOnStdin = (pid: number) => polls(pid, 0) || blockedReading(pid, 0);

/** Does `pid` wait in epoll on a descriptor open on `path`? */
function pollsFile(pid: number, path: string): boolean {
  try {
    const fds = readdirSync(`/proc/${pid}/fd`).filter((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`) === path);
    return fds.some((fd) => polls(pid, Number(fd)));
  } catch {
    return false; // ended meanwhile
  }
}

/** Is a thread of `pid` blocked opening a FIFO that has no writer yet? (the kernel's wait_for_partner). */
function opensFifo(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/task`).some((task) => readFileSync(`/proc/${pid}/task/${task}/wchan`, 'utf8') === 'wait_for_partner');
  } catch {
    return false; // ended meanwhile
  }
}

/**
 * Resolves once `pid` waits for a writer of the FIFO at `path`: in epoll on a descriptor open
 * on it (Node), or in a worker thread's open of it (Bun and Deno, whose exit does not wait
 * for that thread). Either way its main thread is free to handle a signal. Linux only.
 */
export async function waitUntilWaitingOnFifo(pid: number, path: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pollsFile(pid, path) && !opensFifo(pid)) {
    if (Date.now() > end) throw new Error(`process ${pid} never waited on ${path} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Does `pid`, or a process it started, wait for data on its stdin now? Linux only. */
export function isReadingStdin(pid: number): boolean {
  return family(pid).some(waitsOnStdin);
}

/**
 * Resolves with the pid of the process (`pid` or one it started) once it waits for data on its
 * stdin: the readiness signal that replaces a fixed sleep before writing to, or signalling, a
 * tool that reads a pipe or socket. Linux only (/proc); gives up after `ms`.
 */
export async function waitUntilReadingStdin(pid: number, ms = 10_000): Promise<number> {
  const end = Date.now() + ms;
  for (;;) {
    const reader = family(pid).find(waitsOnStdin);
    if (reader !== undefined) return reader;
    if (Date.now() > end) throw new Error(`process ${pid} never waited on its stdin within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Bytes `pid` has read through read(2) and the like so far (Linux: rchar of /proc/PID/io). */
export function bytesRead(pid: number): number {
  return Number(/^rchar:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
}

/** Resolves once `pid` has read at least `count` more bytes than `before`; gives up after `ms`. */
export async function waitUntilRead(pid: number, before: number, count: number, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (bytesRead(pid) < before + count) {
    if (Date.now() > end) throw new Error(`process ${pid} did not read ${count} more bytes within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Is `pid` a keeper (spawn.ts starts it as `node -e "(function keeperMain() {...})()"`)? */
export function isKeeper(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('keeperMain');
  } catch {
    return false; // ended meanwhile
  }
}

/** Every process whose parent is `pid`, from /proc; undefined where there is none. */
export function allChildrenOf(pid: number): number[] | undefined {
  if (!existsSync('/proc')) return undefined;
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    const children: number[] = [];
    for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        // After the parenthesised command name: state, then the parent's pid.
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) children.push(Number(entry));
      } catch {
        // ended meanwhile
      }
    }
    return children;
  }
}

/** The keepers (ADR 0029) that the consumer `pid` started. */
export function keepersOf(pid: number): number[] {
  return (allChildrenOf(pid) ?? []).filter(isKeeper);
}
