/**
 * Ctrl-C, a closed terminal or a `kill` while a command runs tools. The tools run in their
 * own process groups (so that a time-out reaches their children), so a terminal's Ctrl-C
 * never reaches them: `twylt` itself must end them, and remove its exchange and run
 * directories, before it exits.
 */
import { setMaxListeners } from 'node:events';
import { constants } from 'node:os';

/** The signals that end a command the way a user means it (not SIGKILL, which cannot be caught). */
export const INTERRUPT_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
type InterruptSignal = (typeof INTERRUPT_SIGNALS)[number];

/** A command ended by one of INTERRUPT_SIGNALS; `run` reports it and exits as a shell would. */
export class InterruptedError extends Error {
  readonly signal: InterruptSignal;
  /** 128 + the signal's number: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP. */
  readonly exitCode: number;

  constructor(signal: InterruptSignal) {
    super('interrupted');
    this.name = 'InterruptedError';
    this.signal = signal;
    this.exitCode = 128 + constants.signals[signal];
  }
}

/**
 * Run `work` with an AbortSignal that fires on the first of INTERRUPT_SIGNALS: whatever it
 * runs (a client call, the conformance runs) kills its tools' process groups and removes its
 * directories, and `work` settles. Then throws InterruptedError, whatever `work` settled
 * with. Each signal is caught once: a second Ctrl-C ends `twylt` at once.
 */
export async function interruptible<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  // Every tool running under it listens for the abort: a tool set of a dozen describing at
  // once is no leak, and without this Node warns at the eleventh listener.
  setMaxListeners(0, controller.signal);
  let caught: InterruptSignal | undefined;
  const handlers = INTERRUPT_SIGNALS.map((signal) => {
    const handler = () => {
      caught ??= signal;
      controller.abort(new InterruptedError(signal));
    };
    process.once(signal, handler);
    return [signal, handler] as const;
  });
  let value: T | undefined;
  try {
    value = await work(controller.signal);
  } catch (error) {
    // After a signal, how `work` failed (an AbortError from the client) is the interruption.
    if (!caught) throw error;
  } finally {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
  if (caught) throw new InterruptedError(caught);
  return value as T;
}
