/**
 * Warm processes (ADR 0026): per tool, a few processes of its command started ahead of the
 * calls, each loaded and blocked on its stdin, so that a call pays no start-up. A call takes
 * one, writes its input and closes stdin (client.ts); a replacement starts at once. Each
 * call still gets a fresh process: nothing is shared between calls.
 *
 * A waiting process has been sent `{`, the first byte of every input. Should its consumer
 * die, it reads `{` and the end of its stdin: malformed JSON, a protocol error, and never the
 * empty stdin that would send a conforming tool to file mode and any input.json in its
 * working directory.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import type { WarmSource } from '../client/client.js';
import { toolSpawnOptions } from '../client/process.js';
import { killTool, spawnTool, type SpawnSandbox } from '../client/spawn.js';
import { warmChannel, type WarmMessage } from '../events/channels.js';

/** Warm processes of all tools together, unless told otherwise (`--max-warm`). */
export const DEFAULT_MAX_WARM = 8;
/** A warm process unused this long is retired (`--warm-idle-ms`): 5 minutes. */
export const DEFAULT_WARM_IDLE_MS = 300_000;

/**
 * The total of warm processes across a consumer's tools. Each holds its tool's memory while
 * it waits (a Node.js or Python tool: 30 to 60 MB), so the total is bounded, not per tool.
 */
export class WarmCap {
  readonly max: number;
  #used = 0;

  constructor(max: number = DEFAULT_MAX_WARM) {
    this.max = max;
  }

  /** Warm processes waiting now, across every pool of this cap. */
  get used(): number {
    return this.#used;
  }

  acquire(): boolean {
    if (this.#used >= this.max) return false;
    this.#used++;
    return true;
  }

  release(): void {
    this.#used--;
  }
}

export interface WarmPoolOptions {
  /** Processes kept waiting, at most. */
  size: number;
  /**
   * What a cold call would run: argv, working directory, and what it adds to the consumer's
   * environment (`undefined` removes a variable), merged at each start as a cold call does.
   */
  command: readonly string[];
  cwd?: string;
  env?: Record<string, string | undefined>;
  cap: WarmCap;
  /** The tool's sandbox: its warm processes start inside it, as its cold calls do. */
  sandbox?: SpawnSandbox;
  /** Retire a process that waited this long; 0 or Infinity: never. */
  idleMs: number;
}

interface Waiting {
  child: ChildProcessWithoutNullStreams;
  timer: NodeJS.Timeout | undefined;
  onGone: () => void;
}

/** Pools still open, all retired when the consumer exits (before the keeper needs to). */
const open = new Set<WarmPool>();
let exitHook = false;

/** The warm processes of one tool. */
export class WarmPool implements WarmSource {
  readonly #options: WarmPoolOptions;
  /** In start order: the oldest, most likely loaded, is taken first. */
  readonly #waiting = new Set<Waiting>();
  #closed = false;

  constructor(options: WarmPoolOptions) {
    this.#options = options;
    open.add(this);
    if (!exitHook) {
      exitHook = true;
      process.once('exit', () => {
        for (const pool of open) pool.close();
      });
    }
    this.fill();
  }

  /** Processes waiting now. */
  get size(): number {
    return this.#waiting.size;
  }

  /** Their process ids, oldest first. */
  get pids(): number[] {
    return [...this.#waiting].flatMap((waiting) => (waiting.child.pid === undefined ? [] : [waiting.child.pid]));
  }

  take(): ChildProcessWithoutNullStreams | undefined {
    let taken: ChildProcessWithoutNullStreams | undefined;
    for (const waiting of this.#waiting) {
      this.#remove(waiting);
      if (isAlive(waiting.child)) {
        taken = waiting.child;
        break;
      }
      discard(waiting.child);
    }
    if (taken) setHeld(taken, true);
    if (warmChannel.hasSubscribers) warmChannel.publish({ hit: taken !== undefined, child: taken } satisfies WarmMessage);
    // Replacements start now, while this call runs; with none waiting, for the next call.
    this.fill();
    return taken;
  }

  /**
   * Start processes up to the pool's size, as the cap allows. Called at creation and by each
   * call: a process that died or was retired while waiting is not replaced before the next
   * call, so a tool that cannot start is not restarted in a loop.
   */
  fill(): void {
    while (!this.#closed && this.#waiting.size < this.#options.size && this.#options.cap.acquire()) {
      if (!this.#start()) break;
    }
  }

  /** Kill every waiting process (its process group) and start no more. Calls in progress go on. */
  close(): void {
    this.#closed = true;
    open.delete(this);
    for (const waiting of this.#waiting) {
      this.#remove(waiting);
      discard(waiting.child);
    }
  }

  #start(): boolean {
    const { command, cwd, env, idleMs, sandbox } = this.#options;
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawnTool(command, { ...toolSpawnOptions({ cwd, env, sandbox }), ahead: true });
    } catch {
      // What a cold call reports itself (E2BIG...): no warm process for this tool.
      this.#options.cap.release();
      return false;
    }
    const waiting: Waiting = {
      child,
      timer: undefined,
      onGone: () => {
        if (this.#remove(waiting)) discard(child);
      },
    };
    // Died, exited early, or could not start (ENOENT comes as 'error'): discarded; the
    // call that would have taken it starts cold.
    child.on('error', waiting.onGone);
    child.once('exit', waiting.onGone);
    child.stdin.on('error', () => {});
    if (idleMs > 0 && Number.isFinite(idleMs)) waiting.timer = setTimeout(waiting.onGone, idleMs).unref();
    child.stdin.write('{');
    // Waiting processes never keep the consumer alive; a call takes hold of its own.
    setHeld(child, false);
    this.#waiting.add(waiting);
    return true;
  }

  /** Out of the pool (its slot of the cap given back); false if it was not in it. */
  #remove(waiting: Waiting): boolean {
    if (!this.#waiting.delete(waiting)) return false;
    clearTimeout(waiting.timer);
    waiting.child.off('error', waiting.onGone);
    waiting.child.off('exit', waiting.onGone);
    this.#options.cap.release();
    return true;
  }
}

function isAlive(child: ChildProcessWithoutNullStreams): boolean {
  return child.pid !== undefined && child.exitCode === null && child.signalCode === null && child.stdin.writable;
}

/** Kill its group and close its pipes, which nobody reads any more. */
function discard(child: ChildProcessWithoutNullStreams): void {
  killTool(child);
  child.stdin.destroy();
  child.stdout.destroy();
  child.stderr.destroy();
}

/** ref() or unref() the process and its pipes: whether they keep the event loop alive. */
function setHeld(child: ChildProcessWithoutNullStreams, held: boolean): void {
  for (const handle of [child, child.stdin, child.stdout, child.stderr] as unknown as { ref?: () => void; unref?: () => void }[]) {
    if (held) handle.ref?.();
    else handle.unref?.();
  }
}
