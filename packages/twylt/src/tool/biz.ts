/**
 * Step 5 of a run: the business function, isolated. Whatever it throws, rejects, leaves
 * unhandled or never settles becomes one rejection that the run loop reports as an
 * execution error. A `process.exit` called while biz is pending leaves no time for a
 * rejection: `onExit` is told, synchronously, from the process's 'exit' event.
 */
import { Fault } from '../protocol/errors.js';

export function callBiz(biz: (input: unknown) => unknown, input: unknown, onExit?: (code: number) => void): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const fault = (thrown: unknown) => {
      cleanup();
      reject(thrown);
    };
    // Nothing left to run while biz is still pending means its promise can never settle.
    const stalled = () =>
      fault(new Fault('UnsettledPromise', 'biz returned a promise that never settled (nothing was left to run)'));
    const exiting = (code: number) => {
      if (!(globalThis as Slots)[RUNTIME_EXIT]) onExit?.(code);
    };
    const cleanup = () => {
      process.off('unhandledRejection', fault);
      process.off('uncaughtException', fault);
      process.off('beforeExit', stalled);
      process.off('exit', exiting);
    };
    process.on('unhandledRejection', fault);
    process.on('uncaughtException', fault);
    process.on('beforeExit', stalled);
    process.on('exit', exiting);
    Promise.resolve()
      .then(() => biz(input))
      .then(
        (value) => {
          cleanup();
          resolve(value);
        },
        fault,
      );
  });
}

/** Symbol.for: a built file's entry and its tool bundle each carry a copy of this module. */
const RUNTIME_EXIT = Symbol.for('twylt.runtimeExit');
type Slots = { [RUNTIME_EXIT]?: true };

/** The runtime itself is ending the process (a signal, a closed stdout): not biz's doing. */
export function expectExit(): void {
  (globalThis as Slots)[RUNTIME_EXIT] = true;
}
