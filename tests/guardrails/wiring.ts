/**
 * Two run-loop duties that guardrails hand to the lead's run loop (see docs/guardrails.md,
 * "Run-loop integration"). Until the run loop does them, the tests that prove them are
 * skipped, with this as the reason.
 */
import { readFileSync } from 'node:fs';
import { ROOT } from '../support/process.js';

const runLoop = readFileSync(`${ROOT}packages/twylt/src/tool/run.ts`, 'utf8');

/** The run loop passes biz errors through RunGuardrails.redactError. */
export const runLoopRedacts = runLoop.includes('redactError');
/** The run loop tells startGuardrails the transport (config errors in file mode at stage transport). */
export const runLoopNamesTransport = /startGuardrails[\s\S]{0,400}transport\s*:/.test(runLoop);
