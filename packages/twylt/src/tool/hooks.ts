/**
 * Hand-offs between a launcher (twylt/bootstrap) and the run loop in the same process.
 * Keyed by Symbol.for so that two copies of twylt loaded side by side still meet.
 */
const STDIN_KEY = Symbol.for('twylt.replayedStdin');

type Slots = { [STDIN_KEY]?: Buffer };

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
