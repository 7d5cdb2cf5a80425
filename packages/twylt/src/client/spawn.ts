/**
 * Start one tool process, the way every consumer does (calls, describes, checks, warm
 * processes): argv only, never a shell; its own process group, so that a time-out or an
 * abort reaches its grandchildren too; and a tool never outlives its consumer. On POSIX
 * systems a keeper process (keeper.ts) watches the consumer and kills every tool group it
 * left behind when it dies, by SIGKILL or the OOM killer included; a normal exit of the
 * consumer ends them the same way. On Windows nothing watches (ADR 0029).
 */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { Writable } from 'node:stream';
import { evalCommand } from '../protocol/runtime.js';
import type { ResourceLimit } from './errors.js';
import { spawnChannel, spawnedChannel, type ProcessMessage } from '../events/channels.js';
import { keeperMain } from './keeper.js';

export interface SpawnToolOptions {
  cwd?: string;
  /**
   * The whole environment of the tool; with a `sandbox`, only what the tool declares (the
   * sandbox adds its own and nothing of the consumer's).
   */
  env?: NodeJS.ProcessEnv;
  /** Run the tool in this sandbox (twylt/toolset's prepareSandbox); default: none. */
  sandbox?: SpawnSandbox;
  /** Started ahead of any call (a warm process): observers attach it to no call. */
  ahead?: boolean;
}

/** What a sandbox driver answers to one spawn; only its type is known here, nothing is loaded. */
export interface SpawnSandbox {
  /** Throws as spawn would (ENOENT for a missing executable) or when the policy forbids. */
  wrap(command: readonly string[], options: { cwd?: string; env?: Record<string, string | undefined> }): SandboxedProcess;
}

/** A limit of the sandbox that ended a call. */
export type SandboxLimit = ResourceLimit;

export interface SandboxedProcess {
  /** What runs instead: the launcher, its options, then the tool's argv. */
  command: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Pipes beyond stdin, stdout and stderr that the launcher talks on. */
  extraPipes: number;
  started(child: ChildProcess): void;
  /** A process started ahead (warm) is taken by a call: what it does from now on is that call's. */
  adopted?(): void;
  /** Once it exited: the limit it ran into, if that is what ended it. Frees per-call resources. */
  ended(exitCode: number | null, signal: NodeJS.Signals | null): SandboxLimit | undefined;
  /**
   * Where the kernel keeps no count of a limit (per-process rlimits): the limit a failed
   * tool's stderr, read to its end, says it ran into.
   */
  limitInOutput?(stderr: string): SandboxLimit | undefined;
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
  const sandboxed = options.sandbox?.wrap(command, { cwd: options.cwd, env });
  const [file, ...args] = sandboxed?.command ?? command;
  let child: ChildProcessWithoutNullStreams;
  try {
    child = spawn(file!, args, {
      cwd: sandboxed?.cwd ?? options.cwd,
      env: sandboxed?.env ?? env,
      stdio: Array<'pipe'>(3 + (sandboxed?.extraPipes ?? 0)).fill('pipe'),
      detached: POSIX,
      windowsHide: true,
    }) as ChildProcessWithoutNullStreams;
  } catch (error) {
    // Thrown at once (ENOMEM, E2BIG...): what the sandbox holds for the call is freed.
    sandboxed?.ended(null, null);
    throw error;
  }
  // Before anything else touches the child: a failed spawn (EMFILE, EAGAIN, ENOENT...) is
  // an 'error' event, and one nobody listens to would end the consumer for every caller.
  // The caller's own listener reports it as the call's failure.
  child.on('error', () => {});
  const pid = child.pid;
  if (pid === undefined) {
    sandboxed?.ended(null, null);
    // Out of descriptors, Node.js made no pipes at all: fail as a spawn that throws, not
    // with a child whose streams are missing.
    if (!child.stdin || !child.stdout || !child.stderr) throw outOfDescriptors(file!);
    return child;
  }
  if (sandboxed) {
    sandboxedChildren.add(child);
    sandboxes.set(child, sandboxed);
    try {
      sandboxed.started(child);
    } catch (error) {
      // The sandbox stopped the process before the tool ran (a cgroup it could not join):
      // the call fails as a spawn that throws, with nothing left behind.
      killTool(child);
      for (const stream of child.stdio) stream?.destroy();
      sandboxed.ended(null, null);
      throw error;
    }
    child.once('exit', (code, signal) => {
      const limit = sandboxed.ended(code, signal);
      if (limit) limitsHit.set(child, limit);
      else if ((code !== 0 || signal !== null) && sandboxed.limitInOutput) limitsInOutput.set(child, sandboxed.limitInOutput);
    });
  }
  if (!POSIX) return child;
  keeper()?.write(`+${pid}\n`);
  child.once('exit', () => {
    killGroup(pid);
    keeper()?.write(`-${pid}\n`);
  });
  return child;
}

/** The error of a spawn that found no descriptor for its pipes (Node.js says which of the two only later). */
function outOfDescriptors(file: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`spawn ${file} EMFILE: no file descriptor left for its pipes (the consumer's limit, EMFILE, or the system's, ENFILE)`), {
    code: 'EMFILE',
    errno: -osConstants.errno.EMFILE,
    syscall: `spawn ${file}`,
    path: file,
  });
}

const sandboxedChildren = new WeakSet<ChildProcess>();
const sandboxes = new WeakMap<ChildProcess, SandboxedProcess>();

/** A warm process taken by the call running now (runProcess's `started`): its sandbox learns of it. */
export function adoptTool(child: ChildProcess): void {
  sandboxes.get(child)?.adopted?.();
}
const limitsHit = new WeakMap<ChildProcess, SandboxLimit>();
const limitsInOutput = new WeakMap<ChildProcess, (stderr: string) => SandboxLimit | undefined>();

/** The sandbox limit that ended `child`, known once it exited and its `stderr` was read. */
export function limitHit(child: ChildProcess, stderr = ''): SandboxLimit | undefined {
  const inOutput = limitsInOutput.get(child);
  if (inOutput) {
    // Asked once: the driver publishes what it finds.
    limitsInOutput.delete(child);
    const limit = inOutput(stderr);
    if (limit) limitsHit.set(child, limit);
  }
  return limitsHit.get(child);
}

/**
 * How a tool ended, as an unsandboxed one reports it: the sandbox's launcher exits with
 * 128 + N when the tool was killed by signal N.
 */
export function exitOf(child: ChildProcess, exitCode: number | null, signal: NodeJS.Signals | null): { exitCode: number | null; signal: NodeJS.Signals | null } {
  if (sandboxedChildren.has(child) && exitCode !== null && exitCode > 128) {
    const name = Object.entries(osConstants.signals).find(([, number]) => number === exitCode - 128)?.[0];
    if (name) return { exitCode: null, signal: name as NodeJS.Signals };
  }
  return { exitCode, signal };
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
/** Spawn failures that pass: the keeper is tried again at the next spawn. */
const TRANSIENT = new Set(['EMFILE', 'ENFILE', 'EAGAIN', 'ENOMEM']);
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
    child.on('error', (error: NodeJS.ErrnoException) => {
      // No runtime to run it: never again. Out of descriptors, processes or memory: at the next spawn.
      if (!TRANSIENT.has(error.code ?? '')) keeperFailed = true;
      keeperStdin = undefined;
    });
    if (child.pid === undefined || !child.stdin) return undefined;
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
  } catch (error) {
    if (!TRANSIENT.has((error as NodeJS.ErrnoException).code ?? '')) keeperFailed = true;
  }
  return keeperStdin;
}
