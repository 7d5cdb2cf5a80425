/**
 * How many tool processes a consumer runs at once. A server that starts a process per
 * request must bound them, or a burst of requests becomes a burst of processes that no
 * machine survives. Calls beyond the limit wait in a bounded queue, first come first
 * served; when the queue is full a call is refused at once, before anything runs, so the
 * caller can retry it without running it twice.
 */
import { AsyncResource } from 'node:async_hooks';
import { queueChannel, type QueueMessage } from '../events/channels.js';

export interface LimiterOptions {
  /** Calls that may run at once (at least 1). */
  maxConcurrent: number;
  /** Calls that may wait for a free slot (0: none wait, a busy limiter refuses at once). */
  maxQueue: number;
}

/** Every slot is taken and the queue is full: the call was not run. */
export class QueueFullError extends Error {
  readonly maxConcurrent: number;
  readonly maxQueue: number;

  constructor(options: LimiterOptions) {
    super(`all ${options.maxConcurrent} tool slots are busy and ${options.maxQueue} calls are already waiting; the call was not run, retry later`);
    this.name = 'QueueFullError';
    this.maxConcurrent = options.maxConcurrent;
    this.maxQueue = options.maxQueue;
  }
}

interface Waiting {
  start: () => void;
  leave: () => void;
}

export class CallLimiter {
  readonly maxConcurrent: number;
  readonly maxQueue: number;
  #running = 0;
  readonly #queue: Waiting[] = [];
  #idle: Array<() => void> = [];

  constructor(options: LimiterOptions) {
    if (!Number.isSafeInteger(options.maxConcurrent) || options.maxConcurrent < 1) {
      throw new RangeError(`maxConcurrent must be a whole number of at least 1, got ${options.maxConcurrent}`);
    }
    if (!Number.isSafeInteger(options.maxQueue) || options.maxQueue < 0) {
      throw new RangeError(`maxQueue must be a whole number of at least 0, got ${options.maxQueue}`);
    }
    this.maxConcurrent = options.maxConcurrent;
    this.maxQueue = options.maxQueue;
  }

  /** Calls running now. */
  get running(): number {
    return this.#running;
  }

  /** Calls waiting for a slot. */
  get queued(): number {
    return this.#queue.length;
  }

  /**
   * Run `task` once a slot is free. Rejects with QueueFullError when none is and the queue
   * is full, and with the signal's reason when `signal` aborts while the call still waits
   * (the task then never runs). Once started, the task owns the signal: the slot is freed
   * when the task settles.
   */
  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#running < this.maxConcurrent) return this.#start(task);
    if (this.#queue.length >= this.maxQueue) {
      this.#publish('refuse', this);
      return Promise.reject(new QueueFullError(this));
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        waiting.leave();
        this.#publish('leave', waiting);
        reject(signal!.reason);
      };
      // A queued call starts when another call ends, in that call's async context: bound
      // here, it runs in its own caller's (what an observer's spans and logs follow).
      const start = AsyncResource.bind(() => {
        this.#publish('start', waiting);
        this.#start(task).then(resolve, reject);
      });
      const waiting: Waiting = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          start();
        },
        leave: () => {
          const at = this.#queue.indexOf(waiting);
          if (at !== -1) this.#queue.splice(at, 1);
          this.#settle();
        },
      };
      this.#queue.push(waiting);
      this.#publish('wait', waiting);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Resolves once nothing runs and nothing waits (at once when idle already). */
  idle(): Promise<void> {
    if (this.#running === 0 && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async #start<T>(task: () => Promise<T>): Promise<T> {
    this.#running++;
    try {
      return await task();
    } finally {
      this.#running--;
      // The slot goes straight to the longest waiting call, if any.
      this.#queue.shift()?.start();
      this.#settle();
    }
  }

  #publish(kind: QueueMessage['kind'], ticket: object): void {
    if (!queueChannel.hasSubscribers) return;
    queueChannel.publish({ kind, ticket, running: this.#running, queued: this.#queue.length } satisfies QueueMessage);
  }

  #settle(): void {
    if (this.#running > 0 || this.#queue.length > 0) return;
    const waiters = this.#idle;
    this.#idle = [];
    for (const resolve of waiters) resolve();
  }
}
