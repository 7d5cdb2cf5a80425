/**
 * Hand-offs between a launcher (twylt/bootstrap) or a built single file (twylt build) and the
 * run loop in the same process.
 * Keyed by Symbol.for so that two copies of twylt loaded side by side still meet.
 */
import type { JsonSpec } from '../protocol/spec.js';

export type { JsonSpec };

const STDIN_KEY = Symbol.for('twylt.replayedStdin');
const SPEC_KEY = Symbol.for('twylt.embeddedSpec');

type Slots = { [STDIN_KEY]?: Buffer; [SPEC_KEY]?: JsonSpec };

/** A launcher that already consumed stdin hands the bytes over, to be read once. */
export function replayStdin(bytes: Buffer): void {
  (globalThis as Slots)[STDIN_KEY] = bytes;
}

export function takeReplayedStdin(): Buffer | undefined {
  const slots = globalThis as Slots;
  const bytes = slots[STDIN_KEY];
  delete slots[STDIN_KEY];
  return bytes;
}

/** A built single file (`twylt build`) carries the json_spec computed at build time. */
export function embedSpec(spec: JsonSpec): void {
  (globalThis as Slots)[SPEC_KEY] = spec;
}

export function embeddedSpec(): JsonSpec | undefined {
  return (globalThis as Slots)[SPEC_KEY];
}
