/** Watching the processes a test started: alive or gone, waiting on stdin, bytes read. */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

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

const pollsStdin = (pid: number) => polls(pid, 0);

/** Does `pid` wait in epoll on a descriptor open on `path`? */
function pollsFile(pid: number, path: string): boolean {
  try {
    const fds = readdirSync(`/proc/${pid}/fd`).filter((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`) === path);
    return fds.some((fd) => polls(pid, Number(fd)));
  } catch {
    return false; // ended meanwhile
  }
}

/** Resolves once `pid` waits (in epoll, not blocked in a system call) for data from the file at `path`. Linux only. */
export async function waitUntilPollingFile(pid: number, path: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pollsFile(pid, path)) {
    if (Date.now() > end) throw new Error(`process ${pid} never waited on ${path} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Does `pid`, or a process it started, wait for data on its stdin now? Linux only. */
export function isReadingStdin(pid: number): boolean {
  return family(pid).some(pollsStdin);
}

/**
 * Resolves with the pid of the process (`pid` or one it started) once it waits for data on its
 * stdin: the readiness signal that replaces a fixed sleep before writing to, or signalling, a
 * tool that reads a pipe or socket. Linux only (/proc); gives up after `ms`.
 */
export async function waitUntilReadingStdin(pid: number, ms = 10_000): Promise<number> {
  const end = Date.now() + ms;
  for (;;) {
    const reader = family(pid).find(pollsStdin);
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
