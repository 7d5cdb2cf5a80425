/**
 * Start one tool process, the way every consumer does (calls, describes, checks, warm
 * processes): argv only, never a shell; its own process group, so that a time-out or an
 * abort reaches its grandchildren too; and a tool never outlives its consumer. On POSIX
 * systems a keeper process (keeper.ts) watches the consumer and kills every tool group it
 * left behind when it dies, by SIGKILL or the OOM killer included; a normal exit of the
 * consumer ends them the same way. On Windows nothing watches (ADR 0029).
 */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Writable } from 'node:stream';
import { evalCommand } from '../protocol/runtime.js';
import { spawnChannel, spawnedChannel, type ProcessMessage } from '../toolset/events.js';
import { keeperMain } from './keeper.js';

export interface SpawnToolOptions {
  cwd?: string;
  /** The whole environment of the tool. */
  env?: NodeJS.ProcessEnv;
  /** Started ahead of any call (a warm process): observers attach it to no call. */
  ahead?: boolean;
}

const POSIX = process.platform !== 'win32';

/**
 * Spawn `command` with three pipes, in a process group of its own. Throws what
 * `child_process.spawn` throws at once (E2BIG...); a missing executable comes as the
 * child's 'error' event, as with spawn. When the tool exits, whatever it left running in
 * its group is killed.
 */
export function spawnTool(command: readonly string[], options: SpawnToolOptions = {}): ChildProcessWithoutNullStreams {
  if (spawnChannel.hasSubscribers || spawnedChannel.hasSubscribers) return observedSpawn(command, options);
  return start(command, options.env, options);
}

/** A spawn an observer sees: it may add to the environment (TRACEPARENT) and watch the child. */
function observedSpawn(command: readonly string[], options: SpawnToolOptions): ChildProcessWithoutNullStreams {
  const message: ProcessMessage = { command, env: options.env ?? process.env, warm: options.ahead === true };
  spawnChannel.publish(message);
  try {
    message.child = start(command, message.env, options);
    return message.child as ChildProcessWithoutNullStreams;
  } finally {
    spawnedChannel.publish(message);
  }
}

function start(command: readonly string[], env: NodeJS.ProcessEnv | undefined, options: SpawnToolOptions): ChildProcessWithoutNullStreams {
  const [file, ...args] = command;
  const child = spawn(file!, args, {
    cwd: options.cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: POSIX,
    windowsHide: true,
  });
  const pid = child.pid;
  if (pid === undefined || !POSIX) return child;
  keeper()?.write(`+${pid}\n`);
  child.once('exit', () => {
    killGroup(pid);
    keeper()?.write(`-${pid}\n`);
  });
  return child;
}

/** SIGKILL to a tool's whole process group (or to the tool alone on Windows); gone is fine. */
export function killTool(child: ChildProcess): void {
  try {
    if (child.pid !== undefined && POSIX) process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  } catch {
    // already gone
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // the group has ended
  }
}

let keeperStdin: Writable | undefined;
let keeperFailed = false;

/** The keeper's end of the pipe, starting the keeper on first use; undefined if it cannot run. */
function keeper(): Writable | undefined {
  if (keeperStdin || keeperFailed) return keeperStdin;
  try {
    const [runtime, ...evaluate] = evalCommand(`(${keeperMain.toString()})()`);
    const child = spawn(runtime!, evaluate, {
      stdio: ['pipe', 'ignore', 'ignore'],
      // Not in the consumer's group: a Ctrl-C or a group kill aimed at the consumer must
      // leave the keeper to do its job.
      detached: true,
      windowsHide: true,
      env: { PATH: process.env.PATH ?? '' },
    });
    child.on('error', () => {
      keeperFailed = true;
      keeperStdin = undefined;
    });
    child.on('exit', () => {
      // A keeper that died is started again at the next spawn; the groups it held are
      // registered again only as new tools start.
      keeperStdin = undefined;
    });
    child.stdin.on('error', () => {});
    // Neither the keeper nor its pipe keeps the consumer alive.
    child.unref();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    keeperStdin = child.stdin;
  } catch {
    keeperFailed = true;
  }
  return keeperStdin;
}
