/**
 * The guardrails of the current run, handed from the run loop to business code in the
 * same process. Keyed by Symbol.for so that two copies of twylt loaded side by side meet.
 */
import type { Writable } from 'node:stream';
import type { GuardrailsConfig } from './config.js';

export interface RunState {
  config: GuardrailsConfig;
  tool: string;
  cwd: string;
  stderr: Writable;
}

const KEY = Symbol.for('twylt.guardrails');

type Slots = { [KEY]?: RunState };

export function setRunState(state: RunState): void {
  (globalThis as Slots)[KEY] = state;
}

export function clearRunState(): void {
  delete (globalThis as Slots)[KEY];
}

export function getRunState(): RunState | undefined {
  return (globalThis as Slots)[KEY];
}
