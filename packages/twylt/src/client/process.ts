/**
 * Run one tool process to completion: argv only (never a shell), stdin written and closed,
 * output bounded, time-out and abort killing the whole process group. No interpretation of
 * what the tool printed happens here; that is the client's job.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawnFailure } from '../protocol/runtime.js';
import { decodeUtf8Strict } from '../protocol/utf8.js';
import { AbortError, OutputTooLargeError, ResourceLimitError, SpawnError, TimeoutError } from './errors.js';
import { adoptTool, exitOf, killTool, limitHit, spawnTool, type SpawnSandbox, type SpawnToolOptions } from './spawn.js';

export const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * Per stream, for every consumer (client, tool sets, MCP bridge, conformance). Well below the
 * 10 MB message limit of MCP's stdio client: a result travels twice in one message
 * (structured, and as text).
 */
export const DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
/**
 * How long the pipes may stay open after the tool's exit: enough to read what it wrote,
 * never a wait on a grandchild that holds them.
 */
const PIPE_GRACE_MS = 200;

export interface RunOptions {
  /** Working directory (default: the current one). */
  cwd?: string;
  /** Added to the inherited environment; `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  /** Bytes for the tool's stdin. Either way stdin is closed, so a reader never waits. */
  stdin?: string | Uint8Array;
  /** Kill the tool after this long (default 30 s). 0 or Infinity: no limit. */
  timeoutMs?: number;
  /** Limit for stdout and for stderr, each (default 4 MiB). */
  maxOutputBytes?: number;
  signal?: AbortSignal;
  /**
   * A process started ahead (a warm one, toolset/warm.ts) to use instead of spawning:
   * `stdin` is written to it and closed, and the time-out counts from now.
   */
  started?: ChildProcessWithoutNullStreams;
  /**
   * Run the tool in this sandbox (twylt/toolset's prepareSandbox): `env` is then all the
   * tool gets of the consumer's environment besides the sandbox's own.
   */
  sandbox?: SpawnSandbox;
}

/** A finished process. Exactly one of `exitCode` and `signal` is set. */
export interface ProcessResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Decoded as UTF-8; see stdoutIsUtf8. */
  stdout: string;
  /** False when stdout held bytes that are not UTF-8 (`stdout` has U+FFFD in their place). */
  stdoutIsUtf8: boolean;
  stderr: string;
  pid: number | undefined;
  durationMs: number;
  /** Writing stdin failed: the tool closed it (or died) before taking the input. */
  stdinRefused: boolean;
}

/**
 * Spawn `command` and wait for it. Rejects with SpawnError, TimeoutError, AbortError or
 * OutputTooLargeError; every other outcome (any exit code, any signal) resolves.
 * When the tool exits, whatever it left running in its process group is killed too.
 */
export function runProcess(command: readonly string[], options: RunOptions = {}): Promise<ProcessResult> {
  const [file] = command;
  if (!file) return Promise.reject(new SpawnError('empty command', command));
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const limit = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const started = performance.now();

  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      if (options.started) killTool(options.started);
      reject(new AbortError(command, options.signal.reason, { stdout: '', stderr: '' }));
      return;
    }
    let child: ChildProcessWithoutNullStreams;
    try {
      if (options.started) adoptTool(options.started);
      child = options.started ?? spawnTool(command, toolSpawnOptions(options));
    } catch (error) {
      // Some failures throw at once instead of emitting 'error': E2BIG (an argument list
      // beyond the system's limit), an invalid argument.
      reject(new SpawnError(`cannot run ${file}: ${spawnFailure(error as NodeJS.ErrnoException, file!)}`, command, {}, { cause: error }));
      return;
    }

    const chunks = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
    const sizes = { stdout: 0, stderr: 0 };
    let failure: Error | undefined;
    let exited: { exitCode: number | null; signal: NodeJS.Signals | null } | undefined;
    let grace: NodeJS.Timeout | undefined;
    let settled = false;
    const output = () => ({
      stdout: Buffer.concat(chunks.stdout).toString('utf8'),
      stderr: Buffer.concat(chunks.stderr).toString('utf8'),
    });

    const killGroup = () => killTool(child);
    /** First failure wins; the promise settles once the tool itself is gone (see drained). */
    const stop = (error: Error) => {
      if (!failure) failure = error;
      killGroup();
    };

    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream].on('data', (chunk: Buffer) => {
        if (failure) return;
        sizes[stream] += chunk.length;
        if (sizes[stream] > limit) {
          chunks[stream].push(chunk.subarray(0, Math.max(0, chunk.length - (sizes[stream] - limit))));
          stop(new OutputTooLargeError(command, stream, limit, output()));
          return;
        }
        chunks[stream].push(chunk);
      });
    }

    const timer =
      timeoutMs > 0 && Number.isFinite(timeoutMs)
        ? setTimeout(() => stop(new TimeoutError(command, timeoutMs, output())), timeoutMs)
        : undefined;
    const onAbort = () => stop(new AbortError(command, options.signal?.reason, output()));
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const finish = (result: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      options.signal?.removeEventListener('abort', onAbort);
      result();
    };
    /** The tool is gone and its output read: settle with the failure, or with how it exited. */
    const drained = () =>
      finish(() => {
        const stderr = Buffer.concat(chunks.stderr).toString('utf8');
        const limit = limitHit(child, stderr);
        if (failure) reject(failure);
        else if (limit) reject(new ResourceLimitError(command, limit, output()));
        else {
          const stdout = Buffer.concat(chunks.stdout);
          const text = decodeUtf8Strict(stdout);
          resolve({ ...exited!, stdout: text ?? stdout.toString('utf8'), stdoutIsUtf8: text !== undefined, stderr, pid: child.pid, durationMs: performance.now() - started, stdinRefused });
        }
      });

    child.on('error', (error: NodeJS.ErrnoException) => {
      // Spawn failures ('ENOENT', 'EACCES') come here and no 'close' may follow.
      if (child.pid === undefined) {
        finish(() => reject(new SpawnError(`cannot run ${file}: ${spawnFailure(error, file!)}`, command, {}, { cause: error })));
      }
    });
    child.on('exit', (exitCode, signal) => {
      exited = exitOf(child, exitCode, signal);
      // The tool is done, and spawnTool has ended what it left in its process group. A
      // grandchild that left the group (setsid) may still hold our pipes: read what the
      // tool wrote, then stop listening instead of waiting for that grandchild.
      grace = setTimeout(() => {
        // One more poll phase first, so that bytes already in the pipes are read.
        setImmediate(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          drained();
        });
      }, PIPE_GRACE_MS);
    });
    // Both pipes ended after the exit: the usual way a run ends.
    child.on('close', drained);

    // A tool that exits without reading its stdin makes our write fail with EPIPE: harmless
    // for a cold call; a warm call that sees it falls back to a cold start (client.ts).
    let stdinRefused = false;
    child.stdin.on('error', () => {
      stdinRefused = true;
    });
    child.stdin.end(options.stdin ?? '');
  });
}

/** How to spawn a tool: in its sandbox with only its declared variables, else with the consumer's environment. */
export function toolSpawnOptions(options: Pick<RunOptions, 'cwd' | 'env' | 'sandbox'>): SpawnToolOptions {
  if (options.sandbox) return { cwd: options.cwd, env: { ...options.env } as NodeJS.ProcessEnv, sandbox: options.sandbox };
  return { cwd: options.cwd, env: mergeEnv(options.env) };
}

/** The environment of a tool: the consumer's own, with `extra` added (`undefined` removes). */
export function mergeEnv(extra: RunOptions['env']): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [key, value] of Object.entries(extra ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}
