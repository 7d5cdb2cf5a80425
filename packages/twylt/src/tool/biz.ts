/**
 * Step 5 of a run: the business function, isolated. Whatever it throws, rejects, leaves
 * unhandled or never settles becomes one rejection that the run loop reports as an
 * execution error.
 */
import { Fault } from '../protocol/errors.js';

export function callBiz(biz: (input: unknown) => unknown, input: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const fault = (thrown: unknown) => {
      cleanup();
      reject(thrown);
    };
    // Nothing left to run while biz is still pending means its promise can never settle.
    const stalled = () =>
      fault(new Fault('UnsettledPromise', 'biz returned a promise that never settled (nothing was left to run)'));
    const cleanup = () => {
      process.off('unhandledRejection', fault);
      process.off('uncaughtException', fault);
      process.off('beforeExit', stalled);
    };
    process.on('unhandledRejection', fault);
    process.on('uncaughtException', fault);
    process.on('beforeExit', stalled);
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
